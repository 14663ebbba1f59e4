"""The Streamable HTTP server: one pure ASGI app around the MCP sessions of a server.

POST carries client messages (one, or a 2025-03-26 batch): notifications and responses get
202, requests get their answer as JSON, or as an event stream when the server sends related
messages first. GET opens the stream for unrelated server messages (or resumes a lost stream
with Last-Event-ID); DELETE ends the session. The rules (status codes, headers) are pure
functions in `mcpkit.protocol.http`; this module reads, routes and writes.

Both eras share the endpoint. A POST without Mcp-Session-Id whose request carries the
2026-07-28 envelope (or whose MCP-Protocol-Version is a modern one) is served statelessly on
the shared modern lanes: its headers are checked against its body, no session id is minted
or echoed, no event ids, nothing to resume, and a client that closes the response cancels
the request. GET and DELETE without a session id get 405.

The server's lifespan starts with the ASGI lifespan when this is the root app, and lazily on
the first request when it is mounted inside another app (Starlette does not forward lifespan
events to mounted apps).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mcpkit.protocol import http as rules
from mcpkit.protocol.http import Body, Refusal
from mcpkit.protocol.http_headers import NAMED_FIELDS, check_request_headers
from mcpkit.protocol.jsonrpc import Request
from mcpkit.protocol.modern import PROTOCOL_VERSION
from mcpkit.transports.http.event_store import EventStore, MemoryEventStore
from mcpkit.transports.http.security import Checker, Security
from mcpkit.transports.http.sessions import (
    HTTPSession,
    HTTPSessionTransport,
    ModernLanes,
    Serve,
    SessionRegistry,
)
from mcpkit.transports.http.streams import (
    Receive,
    ResponseStream,
    Send,
    Ticker,
    respond,
    send_json,
    stream_events,
)

Running = Callable[[], contextlib.AbstractAsyncContextManager[Any]]
# A tool's name -> its x-mcp-header parameters (header name -> property path), or None.
ToolHeaders = Callable[[str], "dict[str, tuple[str, ...]] | None"]
_DEFAULT_STORE: Any = object()
_STATELESS_INIT = "mcpkit-stateless-initialize"


@dataclass(frozen=True)
class HTTPOptions:
    """How the app serves. `response_mode`: "auto" (JSON unless the handler sends something
    first), "json" or "sse" ("json" is for the handshake era, where related messages can go
    to the GET stream; a 2026-07-28 request has none and is answered as in "auto").
    `event_store`: a bounded memory store by default, None for none. `tool_headers`: a tool's
    name -> its Mcp-Param headers (2026-07-28). `drain_timeout`: how long `drain()` waits."""

    path: str = "/mcp"
    stateless: bool = False
    response_mode: str = "auto"
    max_body: int = 4 * 1024 * 1024
    max_sessions: int | None = 10_000
    idle_timeout: float | None = 1800.0
    event_store: EventStore | None = field(default=_DEFAULT_STORE)
    retry_ms: int = 1000
    keepalive: float | None = 15.0
    security: Security = field(default_factory=Security)
    legacy_sse: bool = False
    legacy_sse_path: str = "/sse"
    legacy_message_path: str = "/messages/"
    tool_headers: ToolHeaders | None = None
    drain_timeout: float = 5.0


class MCPHTTPApp:
    """`await app(scope, receive, send)`: Streamable HTTP for a server's sessions.

    `tool_headers` (else `options.tool_headers`) names the Mcp-Param headers a tools/call
    must carry; `close_subscriptions` is called by `drain()` to end long-lived 2026-07-28
    requests (subscriptions/listen) gracefully, and may return an awaitable.
    """

    def __init__(
        self,
        serve: Serve,
        running: Running,
        options: HTTPOptions,
        *,
        tool_headers: ToolHeaders | None = None,
        close_subscriptions: Callable[[], Any] | None = None,
    ) -> None:
        if options.response_mode not in ("auto", "json", "sse"):
            raise ValueError(f"response_mode must be auto, json or sse: {options.response_mode!r}")
        store = options.event_store
        if store is _DEFAULT_STORE:
            store = None if options.stateless else MemoryEventStore()
        self.options = options
        self.event_store: EventStore | None = store
        self.sessions = SessionRegistry(options.max_sessions, options.idle_timeout, store)
        self.modern = ModernLanes(serve)
        self._ticker = Ticker()
        self._turn = Turn()
        self._tool_headers = tool_headers or options.tool_headers
        self._close_subscriptions = close_subscriptions
        self._serve = serve
        self._running = running
        self._checker = Checker(options.security)
        self._started: asyncio.Future[None] | None = None
        self._stop: asyncio.Event | None = None
        self._keeper: asyncio.Task[None] | None = None
        self.legacy: Any = None
        if options.legacy_sse:
            from mcpkit.transports.http.legacy import LegacySSE

            self.legacy = LegacySSE(serve, options.legacy_message_path, options.max_body)

    # -- lifespan ------------------------------------------------------------------------------

    async def start(self) -> None:
        """Enter the server's lifespan (once); requests call this lazily."""
        if self._started is None:
            loop = asyncio.get_running_loop()
            self._started = loop.create_future()
            self._stop = asyncio.Event()
            self._keeper = loop.create_task(self._keep())
        await asyncio.shield(self._started)

    async def _keep(self) -> None:
        assert self._started is not None and self._stop is not None
        try:
            async with self._running():
                self._started.set_result(None)
                await self._stop.wait()
                await self.modern.close()
                await self.sessions.terminate_all()
                if self.legacy is not None:
                    await self.legacy.terminate_all()
        except BaseException as exc:
            if not self._started.done():
                self._started.set_exception(exc)
            raise

    async def drain(self) -> None:
        """End long-lived 2026-07-28 requests gracefully (each subscription gets its completion
        result), then wait -- at most `options.drain_timeout` s -- for the modern requests in
        flight to be answered. Call it before the HTTP server shuts down: a server such as
        uvicorn waits for open responses to end before it tells the app (lifespan) to stop."""
        if self._close_subscriptions is not None:
            outcome = self._close_subscriptions()
            if inspect.isawaitable(outcome):
                await outcome
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.options.drain_timeout
        while self.modern.busy() and loop.time() < deadline:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0)  # let the last answers leave on their responses

    async def stop(self) -> None:
        """End every session and leave the lifespan."""
        if self._keeper is None or self._stop is None:
            return
        await self.drain()
        self._stop.set()
        await asyncio.gather(self._keeper, return_exceptions=True)
        self._keeper = self._started = self._stop = None

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await self.start()
                except Exception as exc:
                    await send({"type": "lifespan.startup.failed", "message": str(exc)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.stop()
                await send({"type": "lifespan.shutdown.complete"})
                return

    # -- requests ------------------------------------------------------------------------------

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "lifespan":
            await self._lifespan(receive, send)
            return
        if kind != "http":
            if kind == "websocket":
                await send({"type": "websocket.close", "code": 1008})
            return
        path = scope["path"]
        root = scope.get("root_path", "")
        if root and path.startswith(root):
            path = path[len(root) :] or "/"
        headers = dict(scope["headers"])
        refused = self._checker.check(scope, headers)
        if refused is not None:
            await _refuse(send, refused)
            return
        if self._started is None or not self._started.done():
            await self.start()
        await self._route(scope, receive, send, path, headers)

    async def _route(
        self,
        scope: dict[str, Any],
        receive: Receive,
        send: Send,
        path: str,
        headers: dict[bytes, bytes],
    ) -> None:
        method = scope["method"]
        options = self.options
        if path in (options.path, options.path + "/"):
            if method == "POST":
                await self._post(receive, send, headers)
            elif method in ("GET", "DELETE") and b"mcp-session-id" not in headers:
                await _refuse(send, rules.method_not_allowed(rules.MODERN_METHODS))
            elif method == "GET" and not options.stateless:
                await self._get(receive, send, headers)
            elif method == "DELETE" and not options.stateless:
                await self._delete(send, headers)
            else:
                allow = rules.STATELESS_METHODS if options.stateless else rules.ENDPOINT_METHODS
                await _refuse(send, rules.method_not_allowed(allow))
        elif self.legacy is not None and path == options.legacy_sse_path and method == "GET":
            await self.legacy.connect(scope, receive, send)
        elif self.legacy is not None and path == options.legacy_message_path:
            await self.legacy.post(scope, receive, send, method)
        else:
            await _refuse(send, rules.refusal(404, "Not Found"))

    async def _post(self, receive: Receive, send: Send, headers: dict[bytes, bytes]) -> None:
        received = await self._read_post(receive, headers)
        if type(received) is Refusal:
            await _refuse(send, received)
            return
        data, body = received  # type: ignore[misc]
        version_header = _text(headers, b"mcp-protocol-version")
        if rules.is_modern_post(_text(headers, b"mcp-session-id"), version_header, body):
            await self._post_modern(receive, send, headers, data, body)
            return
        version, refused = rules.check_protocol_version(version_header)
        if refused is not None and not body.initialize:
            await _refuse(send, refused)
            return
        if self.options.stateless:
            await self._post_stateless(receive, send, data, body, version)
            return
        if body.initialize:
            if self.sessions.full():
                message = "Service Unavailable: too many sessions"
                await _refuse(send, rules.refusal(503, message, rules.SERVER_ERROR))
                return
            found: HTTPSession | Refusal = self.sessions.create(self._serve)
        else:
            found = self._session(headers)
        if type(found) is Refusal:
            await _refuse(send, found)
            return
        session: HTTPSession = found  # type: ignore[assignment]
        await self._answer(receive, send, session.transport, (data, body), session)

    async def _read_post(
        self, receive: Receive, headers: dict[bytes, bytes]
    ) -> tuple[bytes, Body] | Refusal:
        """The body of a POST, or why it is refused."""
        limit = self.options.max_body
        refused = _post_headers(
            headers.get(b"accept"), headers.get(b"content-type")
        ) or rules.check_content_length(_text(headers, b"content-length"), limit)
        if refused is not None:
            return refused
        data = await _read_body(receive, limit)
        if data is None:
            return rules.too_large(limit)
        body = rules.inspect_body(data)
        if type(body) is Refusal:
            return body
        return data, body  # type: ignore[return-value]

    async def _post_modern(
        self, receive: Receive, send: Send, headers: dict[bytes, bytes], data: bytes, body: Body
    ) -> None:
        """A 2026-07-28 POST: checked, then served on a modern lane; no session."""
        refused = rules.check_modern_request(body)
        if refused is None and body.request_ids:
            refused = self._check_headers(headers, body.message) or rules.check_modern_version(body)
        if refused is not None:
            await _refuse(send, refused)
            return
        if not body.request_ids:  # no client notifications at this revision: nothing to do
            await send_json(send, 202, b"")
            return
        lanes = self.modern
        lane = lanes.pick(body.request_ids[0])
        if lane is None:
            message = "Service Unavailable: too many requests with this id in flight"
            await _refuse(send, rules.refusal(503, message, rules.SERVER_ERROR))
            return
        stream = lane.open_stream(body.request_ids, False)
        lane.feed(body.message)  # served now: an inline answer is in `stream` on return
        prefix = stream.prefix
        mode = self.options.response_mode
        try:
            if stream.finished and len(stream.items) == 1:  # answered alone, at once
                answer = stream.items.pop()
                status = rules.modern_status(answer, prefix)
                if mode != "sse" or status != 200:
                    if self._turn.answered():  # not the first answer of this loop turn
                        await asyncio.sleep(0)  # leave with the others, at the turn's end
                    await send_json(send, status, answer)
                    return
                stream.items.append(answer)
            await respond(
                send,
                receive,
                stream,
                # no GET stream to divert related messages to: "json" answers as "auto" does
                mode="auto" if mode == "json" else mode,
                headers=[],
                record=lane.record,
                priming_retry=None,
                keepalive=self.options.keepalive,
                divert=lane.divert,
                status_of=lambda answer: rules.modern_status(answer, prefix),
                ticker=self._ticker,
            )
        finally:
            if not stream.finished:  # the client left first: that cancels the request
                lanes.cancel(lane, stream)
            lanes.release(lane)

    def _check_headers(self, headers: dict[bytes, bytes], request: Request) -> Refusal | None:
        """Mcp-Method, Mcp-Name and Mcp-Param-* against the body (400 -32020)."""
        params = request.params or {}
        method = request.method
        field = NAMED_FIELDS.get(method)
        named = None if field is None else params.get(field)
        simple = named is None or type(named) is str
        paths = None
        if method == "tools/call" and type(named) is str and self._tool_headers is not None:
            paths = self._tool_headers(named)
        envelope = request.envelope  # read by `check_modern_request`: its version is a str
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

    async def _answer(
        self,
        receive: Receive,
        send: Send,
        transport: HTTPSessionTransport,
        message: tuple[bytes, Body],
        session: HTTPSession | None,
    ) -> None:
        data, body = message
        ids = body.request_ids
        if any(request_id in transport.pending for request_id in ids):
            message = "Bad Request: a request with this id is already in flight"
            await _refuse(send, rules.refusal(400, message))
            return
        stream = transport.open_stream(ids, body.batch) if ids else None
        transport.feed(data)
        for request_id in body.cancelled:
            cancelled = transport.pending.get(request_id)
            if cancelled is not None:
                transport.close_stream(cancelled)
        headers: list[tuple[bytes, bytes]] = []
        if session is not None:
            headers.append((b"mcp-session-id", session.id.encode()))
        if stream is not None and body.initialize:
            stream.on_final = self._on_initialize(session, headers)
        if stream is None:
            await send_json(send, 202, b"", headers)
            return
        version = session.version if session is not None else None
        resumable = version in rules.RESUMABLE_VERSIONS and self.event_store is not None
        await respond(
            send,
            receive,
            stream,
            mode=self.options.response_mode,
            headers=headers,
            record=transport.record,
            priming_retry=self.options.retry_ms if resumable else None,
            keepalive=self.options.keepalive,
            divert=transport.divert,
        )

    def _on_initialize(
        self, session: HTTPSession | None, headers: list[tuple[bytes, bytes]]
    ) -> Callable[[bytes], None] | None:
        if session is None:
            return None

        def remember(answer: bytes) -> None:
            session.version = rules.negotiated_version(answer)
            if session.version is None:  # the handshake failed: no session, no id given out
                self.sessions.sessions.pop(session.id, None)
                session.transport.shut()
                headers.clear()

        return remember

    def _session(self, headers: dict[bytes, bytes]) -> HTTPSession | Refusal:
        session_id = _text(headers, b"mcp-session-id")
        if session_id is None:
            return rules.session_required()
        session = self.sessions.get(session_id)
        if session is None:
            return rules.session_not_found()
        return session

    async def _post_stateless(
        self, receive: Receive, send: Send, data: bytes, body: Body, version: str
    ) -> None:
        if not body.request_ids:
            await send_json(send, 202, b"")
            return
        transport = HTTPSessionTransport("", None)
        task = asyncio.get_running_loop().create_task(self._serve(transport))
        if not body.initialize:
            transport.ignored = _STATELESS_INIT
            transport.feed(_synthetic_initialize(version))
            transport.feed(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        try:
            await self._answer(receive, send, transport, (data, body), None)
        finally:
            transport.shut()
            await asyncio.gather(task, return_exceptions=True)

    async def _get(self, receive: Receive, send: Send, headers: dict[bytes, bytes]) -> None:
        refused = rules.check_get_headers(_text(headers, b"accept"))
        if refused is None:
            found = self._session(headers)
            refused = found if type(found) is Refusal else None
        if refused is None:
            _, refused = rules.check_protocol_version(_text(headers, b"mcp-protocol-version"))
        if refused is not None:
            await _refuse(send, refused)
            return
        session: HTTPSession = found  # type: ignore[assignment]
        await self._get_stream(session, receive, send, _text(headers, b"last-event-id"))

    async def _get_stream(
        self, session: HTTPSession, receive: Receive, send: Send, last_event_id: str | None
    ) -> None:
        """The GET stream, or a lost stream resumed: what followed `last_event_id`, then
        whatever still comes on that stream while its request is open."""
        transport = session.transport
        stream_id = rules.STANDALONE_STREAM
        replay: list[tuple[str, bytes]] = []
        if last_event_id is not None:
            stream_id = rules.event_stream(last_event_id) or rules.STANDALONE_STREAM
        if stream_id == rules.STANDALONE_STREAM:
            stream = transport.standalone
        else:
            live = [s for s in transport.pending.values() if s.stream_id == stream_id]
            stream = live[0] if live else ResponseStream(stream_id)
            if not live:  # its request is answered: replay, then end
                stream.attached = False
                stream.finished = True
        if stream.attached:
            await _refuse(send, rules.refusal(409, "Conflict: this stream is already open"))
            return
        stream.attached = True  # from now on new messages wait in the stream, not the store
        if last_event_id is not None and self.event_store is not None:
            replay = await self.event_store.replay_after(session.id, last_event_id) or []
        resumable = session.version in rules.RESUMABLE_VERSIONS and self.event_store is not None
        await stream_events(
            send,
            receive,
            stream,
            headers=[(b"mcp-session-id", session.id.encode())],
            record=transport.record,
            priming_retry=self.options.retry_ms if resumable else None,
            keepalive=self.options.keepalive,
            replay=replay,
        )

    async def _delete(self, send: Send, headers: dict[bytes, bytes]) -> None:
        found = self._session(headers)
        if type(found) is Refusal:
            await _refuse(send, found)
            return
        await self.sessions.terminate(found.id)  # type: ignore[union-attr]
        await send_json(send, 200, b"")


class Turn:
    """Whether a modern answer was already given in this event-loop turn.

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


def _synthetic_initialize(version: str) -> bytes:
    return (
        b'{"jsonrpc":"2.0","id":"%b","method":"initialize","params":{"protocolVersion":"%b",'
        b'"capabilities":{},"clientInfo":{"name":"stateless","version":"0"}}}'
        % (_STATELESS_INIT.encode(), version.encode())
    )


@functools.lru_cache(maxsize=64)
def _post_headers(accept: bytes | None, content_type: bytes | None) -> Refusal | None:
    return rules.check_post_headers(
        None if accept is None else accept.decode("latin-1"),
        None if content_type is None else content_type.decode("latin-1"),
    )


def _mcp_headers(headers: dict[bytes, bytes]) -> dict[str, str]:
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


def _text(headers: dict[bytes, bytes], name: bytes) -> str | None:
    value = headers.get(name)
    return None if value is None else value.decode("latin-1")


async def _read_body(receive: Receive, limit: int) -> bytes | None:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return b"".join(chunks)
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return chunks[0] if len(chunks) == 1 else b"".join(chunks)


async def _refuse(send: Send, refused: Refusal) -> None:
    await send_json(send, refused.status, refused.body, list(refused.headers))
