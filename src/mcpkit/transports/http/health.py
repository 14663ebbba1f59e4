"""Liveness and readiness for an orchestrator or a load balancer, and what draining refuses.

`Health` sits in the app's chain before the Host/Origin check and answers two paths itself
(`/healthz` and `/readyz` by default, `health_path=` and `ready_path=`; None turns one off):

- liveness: 200 `{"status": "ok"}` as long as the event loop turns. No I/O: a Redis outage
  must not make an orchestrator restart every worker.
- readiness: 503 `{"status": "draining"}` once `MCPHTTPApp.drain()` started (SIGTERM), 503
  `{"status": "unavailable"}` when the shared state (Redis) does not answer a PING within
  `probe_timeout` s, else 200 `{"status": "ready"}`. The state's answer is kept `cache` s,
  and probes arriving together share one round trip.

Both are answered without authorization and whatever the Host header says: a kubelet probes
with the pod's IP as Host and carries no token, and the answers tell nothing but those words.

`Draining` is put in front of the whole chain while the app drains: a new long-lived response
(a GET stream, a legacy SSE connection) is refused with 503 and Retry-After, so the client
reconnects elsewhere instead of holding up the shutdown. New sessions are refused where an
`initialize` is recognized (handshake.py), unless the state is shared between workers.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass

from mcpkit.errors import SERVER_ERROR
from mcpkit.protocol import http as rules
from mcpkit.transports.http.asgi import ASGIApp, Scope, direct
from mcpkit.transports.http.requests import refuse
from mcpkit.transports.http.streams import Receive, Send, send_json

logger = logging.getLogger("mcpkit.http")

# Retry soon: behind a balancer the retry reaches another worker.
DRAINING = rules.refusal(
    503,
    "Service Unavailable: the server is shutting down",
    SERVER_ERROR,
    ((b"retry-after", b"1"),),
)
_NO_STORE = [(b"cache-control", b"no-store")]
_BODIES = {
    status: b'{"status":"%s"}' % status.encode()
    for status in ("ok", "ready", "draining", "unavailable")
}


@dataclass(frozen=True, slots=True)
class HealthOptions:
    """The probe paths (None: not served), how long a state check's answer is kept (`cache`
    s) and how long it may take (`probe_timeout` s)."""

    health_path: str | None = "/healthz"
    ready_path: str | None = "/readyz"
    cache: float = 1.0
    probe_timeout: float = 1.0


class StateProbe:
    """Whether the shared state answers: `check()` bounded by `timeout` s, its answer kept for
    `ttl` s by `clock` (monotonic seconds), one check at a time whoever asks."""

    def __init__(
        self,
        check: Callable[[], Awaitable[object]],
        *,
        ttl: float,
        timeout: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._check = check
        self._ttl = ttl
        self._timeout = timeout
        self._clock = clock
        self._answer = False
        self._until = float("-inf")
        self._pending: asyncio.Future[bool] | None = None

    async def reachable(self) -> bool:
        if self._clock() < self._until:
            return self._answer
        if self._pending is None:
            self._pending = asyncio.ensure_future(self._ask())
        return await asyncio.shield(self._pending)

    async def _ask(self) -> bool:
        try:
            await asyncio.wait_for(self._check(), self._timeout)
            answer = True
        except Exception as exc:  # any failure means "not ready"; the kind only (no URL)
            logger.warning("readiness: the shared state did not answer (%s)", type(exc).__name__)
            answer = False
        self._answer, self._until = answer, self._clock() + self._ttl
        self._pending = None
        return answer


class Health:
    """Answers the probe paths (module docstring); every other request goes on to `app`."""

    __slots__ = ("app", "draining", "live", "probe", "ready")

    def __init__(
        self,
        app: ASGIApp,
        options: HealthOptions,
        draining: Callable[[], bool],
        probe: StateProbe | None,
    ) -> None:
        self.app = direct(app)
        self.live = options.health_path
        self.ready = options.ready_path
        self.draining = draining
        self.probe = probe

    def __call__(self, scope: Scope, receive: Receive, send: Send) -> Awaitable[None]:
        path = scope["path"]
        if path == self.live:
            return self._answer(scope, send, None)
        if path == self.ready:
            return self._answer(scope, send, self._readiness)
        return self.app(scope, receive, send)

    async def _answer(
        self, scope: Scope, send: Send, check: Callable[[], Awaitable[str]] | None
    ) -> None:
        if scope["method"] not in ("GET", "HEAD"):
            await not_allowed(scope, None, send)
            return
        status = "ok" if check is None else await check()
        code = 200 if status in ("ok", "ready") else 503
        body = b"" if scope["method"] == "HEAD" else _BODIES[status]
        await send_json(send, code, body, _NO_STORE)

    async def _readiness(self) -> str:
        if self.draining():
            return "draining"
        if self.probe is not None and not await self.probe.reachable():
            return "unavailable"
        return "ready"


async def not_allowed(scope: Scope, receive: object, send: Send) -> None:
    """405 for a probe path asked with another method than GET or HEAD (a POST reaches this
    through the app's table: POSTs do not pass `Health`)."""
    await send_json(send, 405, b'{"status":"method not allowed"}', [(b"allow", b"GET, HEAD")])


class Draining:
    """While the app drains: GET on `stream_paths` (the MCP endpoint's streams, the legacy
    SSE connection) is 503 with Retry-After; everything else goes on to `app`."""

    __slots__ = ("app", "paths")

    def __init__(self, app: ASGIApp, stream_paths: Iterable[str]) -> None:
        self.app = direct(app)
        self.paths = frozenset(stream_paths)

    def __call__(self, scope: Scope, receive: Receive, send: Send) -> Awaitable[None]:
        if scope["method"] == "GET" and scope["path"] in self.paths:
            return refuse_draining(send)
        return self.app(scope, receive, send)


async def refuse_draining(send: Send) -> None:
    """503 with Retry-After: this worker is shutting down."""
    await refuse(send, DRAINING)
