"""2026-07-28 over Streamable HTTP: every request its own POST, served on its own.

A 2026-07-28 POST names no session. Its envelope is read once (`check_per_request_body`), its
`Mcp-Method` / `Mcp-Name` / `Mcp-Param-*` headers are checked against the body, and the
request is served by the `SessionlessServer` against the server's configuration of the
moment. Its messages go to one `ResponseStream`: a lone answer leaves as JSON with the status
its error code calls for, anything more as an event stream. A client that closes the
response cancels the request. No session id, no event ids, nothing to resume.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from typing import Any

from mcpkit.protocol import http as rules
from mcpkit.protocol.http import Body, Refusal
from mcpkit.protocol.http_headers import NAMED_FIELDS, check_request_headers
from mcpkit.protocol.jsonrpc import Request
from mcpkit.protocol.per_request import PROTOCOL_VERSION, Envelope
from mcpkit.runtime.principal import Principal
from mcpkit.runtime.sessionless import SessionlessServer
from mcpkit.transports.http.health import DRAINING
from mcpkit.transports.http.requests import Headers, refuse
from mcpkit.transports.http.streams import (
    Receive,
    ResponseStream,
    Send,
    Ticker,
    no_event_ids,
    respond,
    send_json,
)

# A tool's name -> its x-mcp-header parameters (header name -> property path), or None.
ToolHeaders = Callable[[str], "dict[str, tuple[str, ...]] | None"]


class PerRequestEndpoint:
    """Serves 2026-07-28 POSTs (see the module docstring)."""

    def __init__(
        self,
        server: SessionlessServer,
        *,
        response_mode: str,
        keepalive: float | None,
        tool_headers: ToolHeaders | None,
    ) -> None:
        self.server = server
        self._mode = response_mode
        self._keepalive = keepalive
        self._tool_headers = tool_headers
        self._ticker = Ticker()
        self._turn = Turn()
        self.draining = False  # the app drains: no new subscription (503 + Retry-After)

    async def post(
        self,
        receive: Receive,
        send: Send,
        headers: Headers,
        body: Body,
        principal: Principal | None,
    ) -> None:
        checked = rules.check_per_request_body(body)
        if type(checked) is Refusal:
            await refuse(send, checked)
            return
        request = body.request
        if request is None:  # no client notifications at this revision: nothing to do
            await send_json(send, 202, b"")
            return
        envelope: Envelope | None = checked  # type: ignore[assignment]
        refused = self._check_headers(headers, request, envelope)
        if refused is None and envelope is None:
            refused = rules.check_per_request_version(request)
        if refused is not None:
            await refuse(send, refused)
            return
        assert envelope is not None
        if self.draining and request.method == "subscriptions/listen":  # would hold the exit
            await refuse(send, DRAINING)
            return
        stream = ResponseStream("")
        peer = self.server.serve_per_request(request, envelope, stream.push, principal)
        try:
            await self._respond(receive, send, stream)
        finally:
            if peer is not None and not stream.finished:  # the client left: that cancels
                peer.cancel()

    async def _respond(self, receive: Receive, send: Send, stream: ResponseStream) -> None:
        mode = self._mode
        if stream.finished and len(stream.items) == 1:  # answered alone, at once
            answer = stream.items[0]
            status = rules.per_request_status(answer)
            if mode != "sse" or status != 200:
                if self._turn.answered():  # not the first answer of this loop turn
                    await asyncio.sleep(0)  # leave with the others, at the turn's end
                await send_json(send, status, answer.data)
                return
        await respond(
            send,
            receive,
            stream,
            # no GET stream to divert related messages to: "json" answers as "auto" does
            mode="auto" if mode == "json" else mode,
            headers=[],
            record=no_event_ids,
            priming_retry=None,
            keepalive=self._keepalive,
            divert=stream.push,  # never called outside "json" mode
            status_of=rules.per_request_status,
            ticker=self._ticker,
        )

    def _check_headers(
        self, headers: Headers, request: Request, envelope: Envelope | None
    ) -> Refusal | None:
        """Mcp-Method, Mcp-Name and Mcp-Param-* against the body (400 -32020)."""
        params = request.params or {}
        method = request.method
        field = NAMED_FIELDS.get(method)
        named = None if field is None else params.get(field)
        simple = named is None or type(named) is str
        paths = None
        if method == "tools/call" and type(named) is str and self._tool_headers is not None:
            paths = self._tool_headers(named)
        if simple and not paths and envelope is not None:
            # Three headers against three body values, all strings: memoized.
            problem = _header_problem(
                (
                    headers.get(b"mcp-protocol-version"),
                    headers.get(b"mcp-method"),
                    headers.get(b"mcp-name"),
                    envelope.version,
                    method,
                    named,
                )
            )
        else:
            message = {"jsonrpc": "2.0", "id": request.id, "method": method, "params": params}
            problem = check_request_headers(_mcp_headers(headers), message, paths)
        return None if problem is None else rules.header_mismatch(request.id, problem)


class Turn:
    """Whether a per-request answer was already given in this event-loop turn.

    A request answered inline would otherwise be written the moment it is read: under
    concurrency the answers of one turn go out one by one between the other requests' work.
    Measured at 32 concurrent (bench W8, README), that cost more server CPU per call than
    the stateful path, whose answers leave together after its pump's hop; grouping them
    removed the difference. So the first answer of a turn leaves at once (a lone request
    waits for nothing) and later ones wait for the end of the turn and leave together.
    """

    __slots__ = ("_marked",)

    def __init__(self) -> None:
        self._marked = False

    def answered(self) -> bool:
        """True when an answer already left in this turn; marks this one."""
        if self._marked:
            return True
        self._marked = True
        asyncio.get_running_loop().call_soon(self._clear)
        return False

    def _clear(self) -> None:
        self._marked = False


def _mcp_headers(headers: Headers) -> dict[str, str]:
    # Only the MCP headers are compared (MCP-Protocol-Version, Mcp-*). Names come
    # lowercased from the ASGI server; the spaces around a value are not part of it.
    return {
        k.decode("latin-1"): v.decode("latin-1").strip(" \t")
        for k, v in headers.items()
        if k[:3] == b"mcp"
    }


@functools.lru_cache(maxsize=256)
def _header_problem(
    compared: tuple[bytes | None, bytes | None, bytes | None, str, str, str | None],
) -> str | None:
    """`check_request_headers` for a request whose tool has no Mcp-Param headers: the
    outcome depends only on the MCP-Protocol-Version, Mcp-Method and Mcp-Name headers sent
    and on the body's protocol version, method and named field (strings: a small, safe key)."""
    *sent, version, method, named = compared
    headers = {}
    for key, value in zip(("mcp-protocol-version", "mcp-method", "mcp-name"), sent, strict=True):
        if value is not None:
            headers[key] = value.decode("latin-1").strip(" \t")
    params: dict[str, Any] = {"_meta": {PROTOCOL_VERSION: version}}
    field = NAMED_FIELDS.get(method)
    if field is not None:
        params[field] = named
    return check_request_headers(headers, {"method": method, "params": params}, None)
