"""The sans-IO MCP connection: one object for both roles, no I/O, no clock.

Feed it what arrived (`receive(data, now)`: bytes, or what `jsonrpc.parse` made of them), the
passage of time (`expire(now)`) and what you want to say (`send_request`, `send_result`,
`send_notification`, `cancel`, ...). It answers with events and queues outgoing messages; take
them with `data_to_send()` (`Outgoing` records: the bytes and the facts a transport routes
them by) and frame them as your transport does (a line on stdio, a body or an SSE event over
HTTP).

A server connection serves the handshake era, and also 2026-07-28 requests that arrive on it
(over stdio both eras share the pipe); those are served by the rules of the server's
configuration as it is when each arrives (`rules`, see `serving.py`).

Guarantees: every request the peer sends gets exactly one answer unless the peer cancels it;
malformed input becomes an error answer (or is dropped where none is owed) and never disturbs
other requests in flight; a request we send ends in exactly one of response, error, timeout,
cancellation or connection loss.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcpkit.errors import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    SERVER_ERROR,
    ProtocolError,
    RequestTimeout,
)
from mcpkit.protocol.config import ConnectionConfig, State
from mcpkit.protocol.events import (
    ErrorReceived,
    Event,
    Initialized,
    InitializeFailed,
    MessageRejected,
    NotificationReceived,
    ProgressReceived,
    RequestCancelled,
    RequestReceived,
    RequestTimedOut,
    ResponseReceived,
)
from mcpkit.protocol.jsonrpc import (
    ErrorResponse,
    Invalid,
    Message,
    Notification,
    Parsed,
    Request,
    RequestId,
    Response,
    encode_error,
    encode_result,
    is_valid_id,
    parse,
)
from mcpkit.protocol.lifecycle import (
    BATCH_VERSIONS,
    Role,
    batch_refused,
    inbound_requests,
)
from mcpkit.protocol.modern import PROTOCOL_VERSION as _ENVELOPE_KEY
from mcpkit.protocol.modern import request_meta
from mcpkit.protocol.opening import Opening
from mcpkit.protocol.outbound import OutboundRequests
from mcpkit.protocol.outgoing import Outgoing, answer
from mcpkit.protocol.serving import (
    Batch,
    Inbound,
    ServerRules,
    progress_token,
    refusal,
    undeclared,
)
from mcpkit.types.methods import MethodInfo

JSONObject = dict[str, Any]
__all__ = ["Connection", "ConnectionConfig", "Outgoing", "State"]


class Connection(Opening):
    """One side of an MCP conversation (client or server), as a pure state machine.

    `rules` (server): the serving rules of the server's configuration as it is now; called for
    each 2026-07-28 request and at `initialize`. Without it, `config` serves throughout.
    """

    def __init__(
        self, config: ConnectionConfig, rules: Callable[[], ServerRules] | None = None
    ) -> None:
        self.config = config
        self.role: Role = config.role
        self.state = State.NEW
        self.protocol_version: str | None = None
        self.peer_info: JSONObject | None = None
        self.peer_capabilities: JSONObject | None = None
        self.instructions: str | None = None  # the server's, as seen by a client
        if rules is None and config.role == "server":
            fixed = ServerRules(config)
            rules = lambda: fixed  # noqa: E731 - the one-line constant provider
        self._rules = rules
        self._outbox: list[Outgoing] = []
        self._inbound: dict[RequestId, Inbound] = {}
        self._outbound = OutboundRequests()
        self._initialize_id: RequestId | None = None
        self._accepted: dict[str, MethodInfo] = {}
        self._allowed_requests: set[str] = set()
        self._envelope: JSONObject | None = None  # client in modern mode: stamped on requests

    @property
    def modern(self) -> bool:
        """Client: speaking a per-request revision (no handshake)."""
        return self._envelope is not None

    @property
    def next_request_id(self) -> RequestId:
        """The id `send_request` gives the next request. A client that must route messages
        naming a request before its answer (a subscription's notifications carry its id)
        reads it just before sending."""
        return self._outbound.next_id

    # -- introspection -------------------------------------------------------------------------

    @property
    def requests_in_flight(self) -> int:
        """Requests from the peer that still owe an answer."""
        return len(self._inbound)

    @property
    def requests_pending(self) -> int:
        """Our requests still waiting for an answer."""
        return len(self._outbound)

    @property
    def has_data_to_send(self) -> bool:
        return bool(self._outbox)

    def data_to_send(self) -> list[Outgoing]:
        """Take the queued outgoing messages (serialized JSON, no framing)."""
        out = self._outbox
        self._outbox = []
        return out

    def next_deadline(self) -> float | None:
        """When `expire` next has work to do, or None."""
        return self._outbound.next_deadline()

    # -- inbound -------------------------------------------------------------------------------

    def receive(self, data: bytes | str | Parsed, now: float) -> list[Event]:
        """Take in one JSON text (one stdio line, one HTTP body), or what `jsonrpc.parse` made
        of one (a transport that parsed a body to route it hands that over, parsed once)."""
        if self.state is State.CLOSED:
            return []
        parsed = parse(data) if isinstance(data, bytes | str) else data
        events: list[Event] = []
        if type(parsed) is list:
            self._receive_batch(parsed, now, events)
        else:
            self._receive_one(parsed, now, events, None)  # type: ignore[arg-type]
        return events

    def _receive_one(
        self, msg: Message | Invalid, now: float, events: list[Event], batch: Batch | None
    ) -> None:
        kind = type(msg)
        if kind is Request:
            self._on_request(msg, events, batch)  # type: ignore[arg-type]
        elif kind is Notification:
            self._on_notification(msg, now, events)  # type: ignore[arg-type]
        elif kind is Response:
            self._on_response(msg, events)  # type: ignore[arg-type]
        elif kind is ErrorResponse:
            self._on_error_response(msg, events)  # type: ignore[arg-type]
        else:
            invalid: Invalid = msg  # type: ignore[assignment]
            if invalid.reply:
                error = encode_error(invalid.id, invalid.code, invalid.message)
                self._reply(answer(error, invalid.id, invalid.code), batch)
            events.append(MessageRejected(invalid.code, invalid.message, invalid.id, invalid.text))

    def _receive_batch(
        self, items: list[Message | Invalid], now: float, events: list[Event]
    ) -> None:
        if self.protocol_version not in BATCH_VERSIONS:
            message = batch_refused(self.protocol_version)
            self._outbox.append(answer(encode_error(None, INVALID_REQUEST, message), None))
            events.append(MessageRejected(INVALID_REQUEST, message, None))
            return
        batch = Batch(next((item.id for item in items if type(item) is Request), None))
        for item in items:
            if type(item) is Request and item.method == "initialize":
                message = "Invalid Request: initialize must not be part of a JSON-RPC batch"
                self._reject(item.id, INVALID_REQUEST, message, events, batch)
                continue
            self._receive_one(item, now, events, batch)
        batch.sealed = True
        self._send_batch(batch.ready())

    def _on_request(self, msg: Request, events: list[Event], batch: Batch | None) -> None:
        request_id, method = msg.id, msg.method
        if request_id in self._inbound:
            message = f"Invalid Request: id {request_id!r} is already used by a request in flight"
            self._reject(request_id, INVALID_REQUEST, message, events, batch)
            return
        if self.role == "server":
            if method == "initialize":
                self._on_initialize(msg, events, batch)
                return
            meta = request_meta(msg.params)
            if meta is not None and _ENVELOPE_KEY in meta:
                self._on_modern_request(msg, meta, events, batch)
                return
        if method == "ping":  # allowed in every state, answered here
            self._reply(answer(encode_result(request_id, {}), request_id), batch)
            return
        if not self._accepts_requests():
            self._reject_early(request_id, method, events, batch)
            return
        info = self._accepted.get(method)
        version = self.protocol_version or ""
        if info is None or undeclared(info, self.config.capabilities, version) is not None:
            self._reject(request_id, METHOD_NOT_FOUND, f"Method not found: {method}", events, batch)
            return
        token = progress_token(msg.params)
        self._accept(Inbound(request_id, method, token, version, batch=batch), msg, events)

    def _accept(self, entry: Inbound, msg: Request, events: list[Event]) -> None:
        limit = self.config.max_in_flight
        if limit is not None and len(self._inbound) >= limit:
            message = f"Server busy: {limit} requests of this connection are already in flight"
            self._reject(entry.id, SERVER_ERROR, message, events, entry.batch)
            return
        self._inbound[entry.id] = entry
        if entry.batch is not None:
            entry.batch.waiting.add(entry.id)
        token = entry.progress_token
        events.append(RequestReceived(entry.id, entry.method, msg.params, token, entry.envelope))

    def _reject_early(
        self, request_id: RequestId, method: str, events: list[Event], batch: Batch | None
    ) -> None:
        if self.role == "server" and self.state is State.NEW:
            # Neither era: not initialized, and no per-request envelope either.
            message = (
                f"Invalid params: {method} carries no _meta.{_ENVELOPE_KEY}; a 2026-07-28 "
                "request must carry its protocol version and client capabilities, an "
                "earlier client must send initialize first"
            )
            self._reject(request_id, INVALID_PARAMS, message, events, batch)
            return
        message = (
            f"Invalid Request: {method} before initialization; only ping is allowed until "
            "the initialize handshake completes"
        )
        self._reject(request_id, INVALID_REQUEST, message, events, batch)

    def _on_modern_request(
        self, msg: Request, meta: JSONObject, events: list[Event], batch: Batch | None
    ) -> None:
        """A 2026-07-28 request: checked and served on its own, whatever the connection's era."""
        rules = self._rules()  # type: ignore[misc]  # a server always has rules
        try:
            accepted = rules.accept_modern(msg, rules.envelope(meta), batch)
        except ProtocolError as exc:
            self._reply(refusal(msg.id, exc), batch)
            events.append(MessageRejected(exc.code, exc.message, msg.id))
            return
        if type(accepted) is Outgoing:
            self._reply(accepted, batch)
        else:
            self._accept(accepted, msg, events)  # type: ignore[arg-type]

    def _accepts_requests(self) -> bool:
        if self.role == "server":
            return self.state is State.INITIALIZING or self.state is State.READY
        return self.state is State.READY

    def _on_initialize(self, msg: Request, events: list[Event], batch: Batch | None) -> None:
        if self.state is not State.NEW:
            message = "Invalid Request: initialize was already received on this connection"
            self._reject(msg.id, INVALID_REQUEST, message, events, batch)
            return
        rules = self._rules()  # type: ignore[misc]  # a server always has rules
        try:
            version, result = rules.initialize(msg.params)
        except ProtocolError as exc:
            self._reject(msg.id, exc.code, exc.message, events, batch)
            return
        params: JSONObject = msg.params  # type: ignore[assignment]  # checked by initialize
        self.config = rules.config  # what we declared is what this session lives by
        self.protocol_version = version
        self.peer_info = params["clientInfo"]
        self.peer_capabilities = params["capabilities"]
        self._accepted = inbound_requests("server", version)
        self.state = State.INITIALIZING
        data = encode_result(msg.id, result)
        self._reply(Outgoing(data, msg.id, True, version=version), batch)

    def _on_notification(self, msg: Notification, now: float, events: list[Event]) -> None:
        method = msg.method
        params = msg.params or {}
        if method == "notifications/cancelled":
            self._on_cancelled(params, events)
        elif method == "notifications/progress":
            self._on_progress(params, now, events)
        elif method == "notifications/initialized":
            if self.role == "server" and self.state is State.INITIALIZING:
                self.state = State.READY
                events.append(
                    Initialized(
                        self.protocol_version or "",
                        self.peer_info or {},
                        self.peer_capabilities or {},
                        None,
                        {},
                    )
                )
        else:
            events.append(NotificationReceived(method, msg.params))

    def _on_cancelled(self, params: JSONObject, events: list[Event]) -> None:
        # Unknown, finished or malformed cancellations are ignored, as the spec asks.
        request_id = params.get("requestId")
        if not is_valid_id(request_id):
            return
        entry = self._inbound.pop(request_id, None)
        if entry is None:
            return
        if entry.batch is not None:
            self._send_batch(entry.batch.forget(request_id))
        reason = params.get("reason")
        events.append(RequestCancelled(request_id, reason if type(reason) is str else None))

    def _on_progress(self, params: JSONObject, now: float, events: list[Event]) -> None:
        token = params.get("progressToken")
        progress: float = params.get("progress")  # type: ignore[assignment]  # checked next
        if not is_valid_id(token) or type(progress) not in (int, float):
            return
        found = self._outbound.by_token(token)
        if found is None:
            return
        request_id, entry = found
        if entry.last_progress is not None and progress <= entry.last_progress:
            return  # progress must increase; a stale or repeated value is dropped
        entry.last_progress = progress
        self._outbound.progressed(request_id, now)
        total = params.get("total")
        message = params.get("message")
        events.append(
            ProgressReceived(
                request_id,
                progress,
                total if type(total) in (int, float) else None,
                message if type(message) is str else None,
            )
        )

    def _on_response(self, msg: Response, events: list[Event]) -> None:
        entry = self._outbound.pop(msg.id)
        if entry is None:
            return  # a late answer to a cancelled or timed-out request: ignored
        if msg.id == self._initialize_id:
            self._finish_initialize(msg.result, events)
        else:
            events.append(ResponseReceived(msg.id, entry.method, msg.result))

    def _on_error_response(self, msg: ErrorResponse, events: list[Event]) -> None:
        error = ProtocolError.from_error_object(msg.error)
        if msg.id is None:
            # The peer could not read something we sent; nothing to resolve.
            events.append(MessageRejected(error.code, error.message, None))
            return
        entry = self._outbound.pop(msg.id)
        if entry is None:
            return
        if msg.id == self._initialize_id:
            # Refused: nothing was agreed, the connection is as before the handshake (a probe
            # sent before it may still be answered; see client/era.py).
            self.state = State.NEW
            events.append(InitializeFailed(error))
        else:
            events.append(ErrorReceived(msg.id, entry.method, error))

    def _reject(
        self,
        request_id: RequestId,
        code: int,
        message: str,
        events: list[Event],
        batch: Batch | None,
    ) -> None:
        self._reply(answer(encode_error(request_id, code, message), request_id, code), batch)
        events.append(MessageRejected(code, message, request_id))

    def _reply(self, out: Outgoing, batch: Batch | None) -> None:
        if batch is None:
            self._outbox.append(out)
        else:
            batch.replies.append(out.data)

    def _send_batch(self, out: Outgoing | None) -> None:
        if out is not None:
            self._outbox.append(out)

    # -- time and end --------------------------------------------------------------------------

    def expire(self, now: float) -> list[Event]:
        """Time out what is due: each request is cancelled and reported as timed out."""
        events: list[Event] = []
        for request_id, entry, limit in self._outbound.expired(now):
            if entry.method == "initialize":
                self._outbound.pop(request_id)
                self.state = State.CLOSED
                events.append(InitializeFailed(RequestTimeout("initialize", limit)))
                continue
            self.cancel(request_id, f"timed out after {limit:g} s")
            events.append(RequestTimedOut(request_id, entry.method, limit))
        return events

    def connection_lost(self) -> list[tuple[RequestId, str]]:
        """The transport is gone. Returns our pending requests (id, method), now failed."""
        self.state = State.CLOSED
        self._inbound.clear()
        return self._outbound.clear()
