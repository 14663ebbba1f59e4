"""The Streamable HTTP server: one pure ASGI app around a server's sessions and requests.

How this works. Every request passes the Origin/Host checks (`security.py`), then is routed
by path and method. A POST's body is read once, within its size and time limits, and parsed
once (`mcpkit.protocol.http.inspect_body`); the parsed messages go where they are served:

- a POST without Mcp-Session-Id whose request carries the 2026-07-28 envelope (or whose
  MCP-Protocol-Version is a modern one) to `ModernEndpoint` (modern.py): served on its own,
  against the server's configuration of the moment;
- anything else to `SessionEndpoint` (handshake.py): the handshake era's sessions, or, for a
  stateless endpoint, each POST served on its own.

GET and DELETE without a session id get 405 (2026-07-28 has no stream to open and no session
to end). With an `Authenticator` (`auth=`, see guard.py) every request to the endpoint (and
the legacy SSE endpoints) carries a verified bearer token or is refused before anything else,
sessions belong to the principal that opened them, and each request's scopes are checked.

The server's lifespan starts with the ASGI lifespan when this is the root app, and lazily on
the first request when it is mounted inside another app (Starlette does not forward lifespan
events to mounted apps).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mcpkit.protocol import http as rules
from mcpkit.protocol.http import Refusal
from mcpkit.runtime.principal import Principal
from mcpkit.runtime.sessionless import SessionlessServer
from mcpkit.transports.http.event_store import EventStore, MemoryEventStore
from mcpkit.transports.http.guard import Authenticator, RequiredScopes, missing_scopes
from mcpkit.transports.http.handshake import SessionEndpoint, StreamOptions
from mcpkit.transports.http.modern import ModernEndpoint, ToolHeaders
from mcpkit.transports.http.requests import BodyClock, header_dict, read_post, refuse, text
from mcpkit.transports.http.security import Checker, Security
from mcpkit.transports.http.sessions import Serve, SessionRegistry
from mcpkit.transports.http.streams import Receive, Send, send_json

Running = Callable[[], contextlib.AbstractAsyncContextManager[Any]]
_DEFAULT_STORE: Any = object()


@dataclass(frozen=True)
class HTTPOptions:
    """How the app serves. `response_mode`: "auto" (JSON unless the handler sends something
    first), "json" or "sse" ("json" is for the handshake era, where related messages can go
    to the GET stream; a request with no GET stream is answered as in "auto").
    `event_store`: a bounded memory store by default, None for none. `tool_headers`: a tool's
    name -> its Mcp-Param headers (2026-07-28). `drain_timeout`: how long `drain()` waits.
    `body_timeout`: seconds a client may take to send a POST body (slow clients cost nothing
    past it: 408). `max_body`: bytes (413 past it). `max_headers` and `max_header_bytes`: 431
    past them. Every limit is in docs/limits.md. `auth`: who may call (see guard.py);
    `required_scopes`: what a request needs beyond that (the server gives it)."""

    path: str = "/mcp"
    stateless: bool = False
    response_mode: str = "auto"
    max_body: int = 4 * 1024 * 1024
    body_timeout: float | None = 30.0
    max_headers: int = 100
    max_header_bytes: int = 64 * 1024
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
    auth: Authenticator | None = None
    required_scopes: RequiredScopes | None = None


class MCPHTTPApp:
    """`await app(scope, receive, send)`: Streamable HTTP for a server.

    `serve` runs a session on a transport; `sessionless` serves requests that belong to no
    session; `running` enters the server's lifespan. `tool_headers` (else
    `options.tool_headers`) names the Mcp-Param headers a tools/call must carry;
    `close_subscriptions` is called by `drain()` to end long-lived 2026-07-28 requests
    (subscriptions/listen) gracefully, and may return an awaitable.
    """

    def __init__(
        self,
        serve: Serve,
        sessionless: SessionlessServer,
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
        self.sessionless = sessionless
        registry = SessionRegistry(options.max_sessions, options.idle_timeout, store)
        streams = StreamOptions(options.response_mode, options.retry_ms, options.keepalive)
        self.handshake = SessionEndpoint(
            serve, sessionless, registry, store, streams, stateless=options.stateless
        )
        self.modern = ModernEndpoint(
            sessionless,
            response_mode=options.response_mode,
            keepalive=options.keepalive,
            tool_headers=tool_headers or options.tool_headers,
        )
        self._close_subscriptions = close_subscriptions
        self._running = running
        self._checker = Checker(options.security)
        self._body_clock = BodyClock(options.body_timeout)
        self._started: asyncio.Future[None] | None = None
        self._stop: asyncio.Event | None = None
        self._keeper: asyncio.Task[None] | None = None
        self.legacy: Any = None
        if options.legacy_sse:
            from mcpkit.transports.http.legacy import LegacySSE

            self.legacy = LegacySSE(serve, options.legacy_message_path, options.max_body)
        auth = options.auth
        self._auth = auth
        self._metadata_paths = () if auth is None else auth.metadata_paths(options.path)
        # The paths a request must be authenticated for: the endpoint, and the legacy ones.
        guarded = {options.path, options.path + "/"}
        if options.legacy_sse:
            guarded |= {options.legacy_sse_path, options.legacy_message_path}
        self._guarded_paths = frozenset(guarded) if auth is not None else frozenset()

    @property
    def sessions(self) -> SessionRegistry:
        """The live handshake-era sessions."""
        return self.handshake.sessions

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
                await self.sessionless.close()
                await self.sessions.terminate_all()
                if self.legacy is not None:
                    await self.legacy.terminate_all()
        except BaseException as exc:
            if not self._started.done():
                self._started.set_exception(exc)
            raise

    async def drain(self) -> None:
        """End long-lived 2026-07-28 requests gracefully (each subscription gets its completion
        result), then wait -- at most `options.drain_timeout` s -- for the sessionless requests
        in flight to be answered. Call it before the HTTP server shuts down: a server such as
        uvicorn waits for open responses to end before it tells the app (lifespan) to stop."""
        if self._close_subscriptions is not None:
            outcome = self._close_subscriptions()
            if inspect.isawaitable(outcome):
                await outcome
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.options.drain_timeout
        while self.sessionless.busy() and loop.time() < deadline:
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
        options = self.options
        headers = header_dict(scope["headers"], options.max_headers, options.max_header_bytes)
        if isinstance(headers, Refusal):
            await refuse(send, headers)
            return
        refused = self._checker.check(scope, headers)
        if refused is not None:
            await refuse(send, refused)
            return
        if path in self._metadata_paths:
            await self._metadata(scope, send)
            return
        principal = None
        if path in self._guarded_paths:
            assert self._auth is not None
            verdict = await self._auth.authenticate(scope, headers)
            if isinstance(verdict, Refusal):
                await refuse(send, verdict)
                return
            principal = verdict
        if self._started is None or not self._started.done():
            await self.start()
        await self._route(scope, receive, send, path, headers, principal=principal)

    async def _metadata(self, scope: dict[str, Any], send: Send) -> None:
        """Protected Resource Metadata (RFC 9728), readable by browser clients too (CORS)."""
        if scope["method"] not in ("GET", "HEAD", "OPTIONS"):
            await refuse(send, rules.method_not_allowed("GET, OPTIONS"))
            return
        assert self._auth is not None
        cors = [(b"access-control-allow-origin", b"*"), (b"access-control-allow-headers", b"*")]
        await send_json(send, 200, self._auth.metadata(scope), cors)

    async def _route(
        self,
        scope: dict[str, Any],
        receive: Receive,
        send: Send,
        path: str,
        headers: dict[bytes, bytes],
        *,
        principal: Principal | None,
    ) -> None:
        method = scope["method"]
        options = self.options
        if path in (options.path, options.path + "/"):
            if method == "POST":
                await self._post(scope, receive, send, headers, principal)
            elif method in ("GET", "DELETE") and b"mcp-session-id" not in headers:
                await refuse(send, rules.method_not_allowed(rules.MODERN_METHODS))
            elif method == "GET" and not options.stateless:
                await self.handshake.get(receive, send, headers, principal)
            elif method == "DELETE" and not options.stateless:
                await self.handshake.delete(send, headers, principal)
            else:
                allow = rules.STATELESS_METHODS if options.stateless else rules.ENDPOINT_METHODS
                await refuse(send, rules.method_not_allowed(allow))
        elif self.legacy is not None and path == options.legacy_sse_path and method == "GET":
            await self.legacy.connect(scope, receive, send, principal)
        elif self.legacy is not None and path == options.legacy_message_path:
            await self.legacy.post(scope, receive, send, method, principal)
        else:
            await refuse(send, rules.refusal(404, "Not Found"))

    async def _post(
        self,
        scope: dict[str, Any],
        receive: Receive,
        send: Send,
        headers: dict[bytes, bytes],
        principal: Principal | None,
    ) -> None:
        options = self.options
        received = await read_post(receive, headers, options.max_body, self._body_clock)
        if type(received) is Refusal:
            await refuse(send, received)
            return
        _, body = received  # type: ignore[misc]
        required = options.required_scopes
        if principal is not None and required is not None and body.request_ids:
            missing = missing_scopes(body.parsed, principal, required)
            if missing is not None:
                assert self._auth is not None
                await refuse(send, self._auth.insufficient_scope(scope, missing))
                return
        version_header = text(headers, b"mcp-protocol-version")
        if rules.is_modern_post(text(headers, b"mcp-session-id"), version_header, body):
            await self.modern.post(receive, send, headers, body, principal)
        else:
            await self.handshake.post(receive, send, headers, body, principal)
