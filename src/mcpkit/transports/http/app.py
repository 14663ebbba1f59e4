"""The Streamable HTTP server: one pure ASGI app, composed of small wrappers and two tables.

How a request flows. `MCPHTTPApp.__call__` takes the ASGI lifespan itself and hands every
HTTP request to the chain built once in `__init__` (each part in its own module, each given
only its own options, see options.py):

    [lazy start] -> [Draining] -> HeaderLimits -> [Health] -> HostCheck -> Router
        --(path, method)--> [BearerGuard] -> handler

- lazy start (here): the server's lifespan is entered on the first request when this app is
  mounted inside another (Starlette does not forward lifespan events to mounted apps); as the
  root app the ASGI lifespan starts it.
- `Draining` (health.py): only once `drain()` started: a new GET stream is 503 + Retry-After.
  Not for a POST, which goes through a chain of its own, without `Draining` and `Health`.
- `HeaderLimits` (wrappers.py): the headers read once into a dict, left in the scope; 431/400.
- `Health` (health.py): the liveness and readiness probes (GET, HEAD), before the Host check
  and auth (an orchestrator probes with the pod's IP as Host); not when both are off.
- `HostCheck` (security.py): Origin and Host; not in the chain when nothing is checked.
- `Router` (routing.py): the (path, method) table. The MCP endpoint (`path`, and `path` + "/")
  with `MCPEndpoint`'s handlers (POST, and GET/DELETE naming a session; 405 for the rest);
  with `auth`, the Protected Resource Metadata paths (served unguarded); with `http_sse`,
  the 2024-11-05 HTTP+SSE paths (http_sse.py); anything else 404.
- `BearerGuard` (wrappers.py, guard.py): only with `auth`, around each MCP and HTTP+SSE
  handler: the verified caller is left in the scope, or the request is refused (401, ...).
- `MCPEndpoint.post` (routing.py): the body read and parsed once, its scopes checked, then
  `PerRequestEndpoint` (per_request.py) for a 2026-07-28 request (no Mcp-Session-Id, the
  2026-07-28 envelope or version header) and `SessionEndpoint` (handshake.py) for the rest:
  handshake-era sessions, or each POST on its own when stateless.

The synchronous checks and the table lookup return the next layer's awaitable instead of
awaiting it, and a wrapper whose feature is off is not in the chain: a POST costs this app's
coroutine and the handler's, one fewer than before the split (counted in bench/README.md).

What outlives a request (handshake-era sessions, SSE events kept for a resume) comes from the
app's `HTTPState` (state.py), asked in one place here: in process by default.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import Callable
from typing import Any

from mcpkit.errors import SERVER_ERROR
from mcpkit.runtime.fanout import FanOutTarget
from mcpkit.runtime.sessionless import SessionlessServer
from mcpkit.transports.http.asgi import ASGIApp, Scope, direct
from mcpkit.transports.http.event_store import EventStore
from mcpkit.transports.http.handshake import SessionEndpoint
from mcpkit.transports.http.health import Draining, Health, StateProbe
from mcpkit.transports.http.health import not_allowed as probe_not_allowed
from mcpkit.transports.http.http_sse import HTTPSSE
from mcpkit.transports.http.options import AppConfig, HTTPAppOptions, app_config
from mcpkit.transports.http.per_request import PerRequestEndpoint, ToolHeaders
from mcpkit.transports.http.routing import MCPEndpoint, Metadata, Router, ScopeCheck
from mcpkit.transports.http.security import HostCheck
from mcpkit.transports.http.sessions import Serve
from mcpkit.transports.http.state import Sessions
from mcpkit.transports.http.streams import Receive, Send
from mcpkit.transports.http.wrappers import BearerGuard, HeaderLimits

Running = Callable[[], contextlib.AbstractAsyncContextManager[Any]]

# The answer of a request still running when the drain timeout ends, and how long (s) those
# answers get to leave before the HTTP server closes what is open.
SHUT_DOWN = "Server shutting down: the request did not finish within the drain timeout"
_ANSWERS_LEAVE = 1.0

__all__ = ["AppConfig", "HTTPAppOptions", "MCPHTTPApp", "app_config"]


class MCPHTTPApp:
    """`await app(scope, receive, send)`: Streamable HTTP for a server.

    `serve` runs a session on a transport; `sessionless` serves requests that belong to no
    session; `running` enters the server's lifespan. `config` (see options.py; `app_config`
    makes one from `http_app`'s keywords). `tool_headers` (unless `config.tool_headers`)
    names the Mcp-Param headers a tools/call must carry; `close_subscriptions` is called by
    `drain()` to end long-lived 2026-07-28 requests (subscriptions/listen) gracefully, and
    may return an awaitable. `fanout_target`: the server whose fan-out a state shared
    between workers carries (`HTTPState.open`).
    """

    def __init__(
        self,
        serve: Serve,
        sessionless: SessionlessServer,
        running: Running,
        config: AppConfig,
        *,
        tool_headers: ToolHeaders | None = None,
        close_subscriptions: Callable[[], Any] | None = None,
        fanout_target: FanOutTarget | None = None,
    ) -> None:
        self.config = config
        self._fanout_target = fanout_target
        self.sessionless = sessionless
        self.event_store: EventStore | None = config.state.event_store
        streams = config.streams
        self.handshake = SessionEndpoint(
            serve,
            sessionless,
            config.state.sessions(config.sessions),
            self.event_store,
            streams,
            stateless=config.stateless,
            shared=config.state.shared,
        )
        self.per_request = PerRequestEndpoint(
            sessionless,
            response_mode=streams.response_mode,
            keepalive=streams.keepalive,
            tool_headers=config.tool_headers or tool_headers,
        )
        self.http_sse: HTTPSSE | None = None
        if config.http_sse is not None:
            self.http_sse = HTTPSSE(serve, config.http_sse.message_path, config.limits.max_body)
        self._close_subscriptions = close_subscriptions
        self._running = running
        self._started: asyncio.Future[None] | None = None
        self._stop: asyncio.Event | None = None
        self._keeper: asyncio.Task[None] | None = None
        self.started = False  # the server's lifespan has been entered
        self.draining = False  # drain() started: readiness is 503, new sessions are refused
        self._in_flight = 0  # POSTs being answered: drain() waits for them
        # POSTs take a chain without the probes (they are GET/HEAD) and never drain-refused
        # (requests of existing sessions are served while draining; a new session is
        # refused where `initialize` is recognized); every other method the full one.
        self._post, self._serving = self._compose()
        self._chain = self._serving  # Draining's around it while draining

    def _compose(self) -> tuple[ASGIApp, ASGIApp]:
        """The wrappers and the table every HTTP request goes through (module docstring): for
        a POST, and for any other method (with the probes)."""
        config = self.config
        auth = config.auth
        scopes = None
        if auth is not None and config.required_scopes is not None:
            scopes = ScopeCheck(auth, config.required_scopes)
        endpoint = MCPEndpoint(
            self.handshake,
            self.per_request,
            config.limits,
            stateless=config.stateless,
            scopes=scopes,
        )

        def guarded(app: ASGIApp) -> ASGIApp:
            return app if auth is None else BearerGuard(app, auth)

        router = Router()
        methods = {method: guarded(handler) for method, handler in endpoint.methods().items()}
        for path in (config.path, config.path + "/"):
            router.add(path, methods, guarded(endpoint.not_allowed))
        if self.http_sse is not None and config.http_sse is not None:
            router.add(
                config.http_sse.sse_path,
                {"GET": guarded(self.http_sse.connect)},
                guarded(router.not_found),
            )
            router.add(config.http_sse.message_path, {}, guarded(self.http_sse.post))
        if auth is not None:
            for metadata_path in auth.metadata_paths(config.path):
                if metadata_path not in router.fallbacks:
                    router.add(metadata_path, {}, Metadata(auth))
        for probe in (config.health.health_path, config.health.ready_path):
            if probe is not None and probe not in router.fallbacks:
                router.add(probe, {}, probe_not_allowed)  # a POST to a probe: 405
        limits = config.limits
        checked = HostCheck.around(router, config.security)
        posts = HeaderLimits(checked, limits.max_headers, limits.max_header_bytes)
        others = HeaderLimits(
            self._with_health(checked), limits.max_headers, limits.max_header_bytes
        )
        return direct(posts), direct(others)

    def _with_health(self, app: ASGIApp) -> ASGIApp:
        health = self.config.health
        if health.health_path is None and health.ready_path is None:
            return app
        reachable = getattr(self.config.state, "reachable", None)  # a shared state's check
        probe = None
        if reachable is not None:
            probe = StateProbe(reachable, ttl=health.cache, timeout=health.probe_timeout)
        return Health(app, health, lambda: self.draining, probe)

    @property
    def sessions(self) -> Sessions:
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
                await self.config.state.open(self._fanout_target)
                self._started.set_result(None)
                self.started = True
                await self._stop.wait()
                await self.sessionless.close()
                await self.sessions.terminate_all()
                if self.http_sse is not None:
                    await self.http_sse.terminate_all()
        except Exception as exc:
            if self._started.done():
                raise
            self._started.set_exception(exc)  # start() reports it: this task is done with it
        except BaseException as exc:  # cancelled while starting: so is start()
            if not self._started.done():
                self._started.set_exception(exc)
            raise

    async def drain(self) -> None:
        """End long-lived responses gracefully: 2026-07-28 subscriptions (each gets its
        completion result), handshake-era GET streams (the response ends, the session does
        not: its client opens the stream again, here after a restart or on another worker)
        and legacy HTTP+SSE streams (their sessions end: that transport cannot resume). Then
        wait -- at most `drain_timeout` s -- for the sessionless requests in flight to be
        answered. Call it before the HTTP server shuts down: a server such as uvicorn waits
        for open responses to end before it tells the app (lifespan) to stop.

        From its start readiness is 503 and new sessions and streams are refused (503 with
        Retry-After: the client goes to another worker; a new session is still opened when
        the state is shared between workers, which serve it on); requests of existing
        sessions are still served, and waited for: every POST being answered, in both
        eras, for at most `drain_timeout` s. A request still running then is answered with
        a JSON-RPC error (-32000, the server is shutting down) and its handler left to be
        cancelled."""
        if not self.draining:
            self.draining = self.handshake.draining = self.per_request.draining = True
            self._chain = direct(Draining(self._serving, self._stream_paths()))
        if self._close_subscriptions is not None:
            outcome = self._close_subscriptions()
            if inspect.isawaitable(outcome):
                await outcome
        for session in self.sessions.held():
            if session.transport.standalone.attached:
                session.transport.standalone.release()
        if self.http_sse is not None:
            await self.http_sse.terminate_all()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.config.drain_timeout
        while (self._in_flight or self.sessionless.busy()) and loop.time() < deadline:
            await asyncio.sleep(0.01)
        if self._in_flight or self.sessionless.busy():
            await self._abandon_in_flight()
        await asyncio.sleep(0)  # let the last answers leave on their responses

    async def _abandon_in_flight(self) -> None:
        """The drain timeout passed: every request still running gets a JSON-RPC error that
        says so, on its own response (instead of the HTTP server's bare 500 when it cancels
        the response later); then a moment, bounded, for those answers to leave."""
        self.sessionless.abandon(SERVER_ERROR, SHUT_DOWN)
        for session in self.sessions.held():
            session.transport.abandon(SERVER_ERROR, SHUT_DOWN)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + _ANSWERS_LEAVE
        while self._in_flight and loop.time() < deadline:
            await asyncio.sleep(0.01)

    def _stream_paths(self) -> list[str]:
        paths = [self.config.path, self.config.path + "/"]
        if self.config.http_sse is not None:
            paths.append(self.config.http_sse.sse_path)
        return paths

    async def stop(self) -> None:
        """End every session and leave the lifespan."""
        if self._keeper is None or self._stop is None:
            return
        await self.drain()
        self._stop.set()
        await asyncio.gather(self._keeper, return_exceptions=True)
        self._keeper = self._started = self._stop = None
        self.started = False
        # stopped: a new start serves again (an app entered twice, as tests do)
        self._chain = self._serving
        self.draining = self.handshake.draining = self.per_request.draining = False

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

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http":
            if not self.started:  # mounted: no ASGI lifespan reaches us
                await self.start()
            if scope["method"] != "POST":
                await self._chain(scope, receive, send)
                return
            self._in_flight += 1
            try:
                await self._post(scope, receive, send)
            finally:
                self._in_flight -= 1
        elif kind == "lifespan":
            await self._lifespan(receive, send)
        elif kind == "websocket":
            await send({"type": "websocket.close", "code": 1008})


def build(
    serve: Serve,
    sessionless: SessionlessServer,
    running: Running,
    options: HTTPAppOptions,
    *,
    tool_headers: ToolHeaders | None = None,
    close_subscriptions: Callable[[], Any] | None = None,
    fanout_target: FanOutTarget | None = None,
) -> MCPHTTPApp:
    """The app for `http_app`'s keywords (see `app_config` for what it raises)."""
    return MCPHTTPApp(
        serve,
        sessionless,
        running,
        app_config(options),
        tool_headers=tool_headers,
        close_subscriptions=close_subscriptions,
        fanout_target=fanout_target,
    )
