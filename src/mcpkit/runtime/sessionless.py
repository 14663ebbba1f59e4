"""Serving requests that belong to no session: each one on its own, against the rules of now.

How this works. A 2026-07-28 request carries everything it needs (its revision, the client's
capabilities), and a POST to a stateless handshake-era endpoint is served without a session
too. `SessionlessServer` takes such a request, asks the server for its rules *as they are
at that moment* (a capability that appeared since the last request is seen), and either
answers at once (server/discover, an unknown method) or starts the handler with a
`RequestPeer`: the request's side of the conversation, which the handler's `Context` talks
to. Everything the request produces -- progress, log messages, its answer -- goes to the
`sink` the transport gave (the POST's response stream), so requests of different clients
that use the same id never meet: there is no table keyed by id.

A handler that returns a dict is answered inside `serve` (the transport finds the answer in
its stream on return); an awaitable runs in a task, which `RequestPeer.cancel` cancels (the
client went away).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from mcpkit.errors import LocalProtocolViolation, ProtocolError
from mcpkit.protocol import Outgoing, Prepared, RequestId, RequestReceived, ServerRules, Timeout
from mcpkit.protocol.jsonrpc import Request
from mcpkit.protocol.per_request import Envelope
from mcpkit.protocol.serving import Inbound, refusal
from mcpkit.runtime.handling import RequestHandler, failure, is_inline
from mcpkit.runtime.principal import Principal

JSONObject = dict[str, Any]
Sink = Callable[[Outgoing], None]


class RequestPeer:
    """One sessionless request being served (see the module docstring); a `Peer`."""

    __slots__ = ("_done", "_inbound", "_sink", "_task", "principal")

    state = None  # no per-connection state: there is no connection

    def __init__(self, inbound: Inbound, sink: Sink, principal: Principal | None) -> None:
        self._inbound = inbound
        self._sink = sink
        self.principal = principal
        self._task: asyncio.Task[None] | None = None
        self._done = False

    @property
    def protocol_version(self) -> str | None:
        return self._inbound.version

    @property
    def peer_info(self) -> JSONObject | None:
        envelope = self._inbound.envelope
        return None if envelope is None else envelope.client_info

    @property
    def peer_capabilities(self) -> JSONObject | None:
        envelope = self._inbound.envelope
        return {} if envelope is None else envelope.capabilities

    @property
    def finished(self) -> bool:
        """Answered, or cancelled."""
        return self._done

    def report_progress(
        self, request_id: RequestId, progress: float, total: float | None, message: str | None
    ) -> bool:
        if self._done or request_id != self._inbound.id:
            return False
        out = self._inbound.progress(progress, total, message)
        if out is None:
            return False
        self._sink(out)
        return True

    def notify(
        self, method: str, params: JSONObject | None = None, *, related_id: RequestId | None = None
    ) -> None:
        """Only notifications about this request travel (on its response stream). Raises
        LocalProtocolViolation for anything else, and as `Inbound.notification` does."""
        if related_id != self._inbound.id:
            raise LocalProtocolViolation(
                f"a sessionless request can only carry notifications about itself ({method})"
            )
        if not self._done:
            self._sink(self._inbound.notification(method, params))

    async def request(
        self,
        method: str,
        params: JSONObject | None = None,
        *,
        timeout: Timeout | None = None,
        related_id: RequestId | None = None,
    ) -> JSONObject:
        """Raises LocalProtocolViolation: a server cannot send requests without a session (a
        2026-07-28 handler asks through input_required instead, which `Context` does)."""
        raise LocalProtocolViolation(
            f"cannot send {method}: there is no session to carry a request to the client"
        )

    def close_stream(self, request_id: RequestId) -> bool:
        return False

    def cancel(self) -> None:
        """The client went away: stop the handler; no answer is sent."""
        self._done = True
        if self._task is not None:
            self._task.cancel()

    def abandon(self, code: int, message: str) -> None:
        """The server stops before this request is answered: the error (`code`, `message`)
        is its answer, and its handler is stopped."""
        if not self._done:
            self._done = True
            self._sink(self._inbound.error(code, message))
        if self._task is not None:
            self._task.cancel()

    # -- answering -------------------------------------------------------------------------

    def _start(self, handler: RequestHandler, event: RequestReceived) -> None:
        try:
            outcome = handler(self, event)
        except Exception as exc:
            self._fail(exc)
            return
        if is_inline(outcome):
            self._answer(outcome)  # type: ignore[arg-type]
        else:
            pending: Awaitable[JSONObject | Prepared] = outcome  # type: ignore[assignment]
            self._task = asyncio.get_running_loop().create_task(self._await(pending))

    async def _await(self, pending: Awaitable[JSONObject | Prepared]) -> None:
        try:
            result = await pending
        except asyncio.CancelledError:
            return  # the client went away (no answer is owed) or shutdown
        except Exception as exc:
            self._fail(exc)
        else:
            self._answer(result)

    def _answer(self, result: JSONObject | Prepared) -> None:
        if not self._done:
            self._done = True
            self._sink(self._inbound.result(result))

    def _fail(self, exc: Exception) -> None:
        if not self._done:
            self._done = True
            self._sink(self._inbound.error(*failure(self._inbound.method, exc)))


class SessionlessServer:
    """Serves sessionless requests with `handler`, by the `rules` of the moment."""

    def __init__(self, rules: Callable[[], ServerRules], handler: RequestHandler) -> None:
        self._rules = rules
        self._handler = handler
        self._running: set[RequestPeer] = set()

    def serve_per_request(
        self, request: Request, envelope: Envelope, sink: Sink, principal: Principal | None = None
    ) -> RequestPeer | None:
        """Serve a 2026-07-28 request whose envelope the transport read. None when it was
        answered at once (its answer is in `sink`); else the request being served."""
        try:
            accepted = self._rules().accept_per_request(request, envelope)
        except ProtocolError as exc:
            sink(refusal(request.id, exc))
            return None
        return self._serve(request, accepted, sink, principal)

    def serve_stateless(
        self, request: Request, version: str, sink: Sink, principal: Principal | None = None
    ) -> RequestPeer | None:
        """Serve a handshake-era request at `version` with no session (`serve_per_request` says
        what comes back)."""
        try:
            accepted = self._rules().accept_stateless(request, version)
        except ProtocolError as exc:
            sink(refusal(request.id, exc))
            return None
        return self._serve(request, accepted, sink, principal)

    def _serve(
        self,
        request: Request,
        accepted: Inbound | Outgoing,
        sink: Sink,
        principal: Principal | None,
    ) -> RequestPeer | None:
        if type(accepted) is Outgoing:
            sink(accepted)
            return None
        inbound: Inbound = accepted  # type: ignore[assignment]
        peer = RequestPeer(inbound, sink, principal)
        event = RequestReceived(
            inbound.id, inbound.method, request.params, inbound.progress_token, inbound.envelope
        )
        peer._start(self._handler, event)
        if peer._task is None:
            return peer
        running = self._running
        running.add(peer)
        peer._task.add_done_callback(lambda _: running.discard(peer))
        return peer

    def busy(self) -> bool:
        """Whether a handler task is still running."""
        return bool(self._running)

    def abandon(self, code: int, message: str) -> None:
        """Answer every request still running with the error (`code`, `message`) and stop
        its handler (the server stops before they finish)."""
        for peer in list(self._running):
            peer.abandon(code, message)

    async def close(self) -> None:
        """Cancel whatever still runs and wait for it."""
        tasks = [peer._task for peer in self._running if peer._task is not None]
        for peer in list(self._running):
            peer.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
