"""Origin and Host checks on every request (DNS rebinding protection), proxy-aware.

A browser page on another site can reach a server bound to localhost; checking `Origin`
stops its requests, and checking `Host` stops a rebound DNS name from reaching us at all.
Behind a reverse proxy the proxy's `X-Forwarded-Host` is believed only when the peer is one
of `trusted_proxies`. `HostCheck` is the ASGI wrapper doing it, second in the app's chain
(app.py); the verdict on the usual few (Origin, Host) pairs is remembered.
"""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import dataclass

from mcpkit.protocol.http import (
    Refusal,
    forbidden_origin,
    host_allowed,
    is_loopback,
    local_hosts,
    local_origins,
    misdirected_host,
    origin_allowed,
)
from mcpkit.transports.http.asgi import HEADERS, ASGIApp, Scope, direct
from mcpkit.transports.http.requests import Headers, refuse
from mcpkit.transports.http.streams import Receive, Send


@dataclass(frozen=True, slots=True)
class Security:
    """`allowed_hosts`/`allowed_origins` None: the loopback names when protection is on.

    `dns_rebinding_protection` None: on when the server binds a loopback address.
    `allowed_origins` is checked whenever a request carries an Origin header.
    """

    allowed_hosts: tuple[str, ...] | None = None
    allowed_origins: tuple[str, ...] | None = None
    dns_rebinding_protection: bool | None = None
    trusted_proxies: tuple[str, ...] = ()
    bind_host: str = "127.0.0.1"

    def hosts(self) -> tuple[str, ...] | None:
        protect = self.dns_rebinding_protection
        if protect is None:
            protect = is_loopback(self.bind_host) or self.allowed_hosts is not None
        if not protect:
            return None
        return self.allowed_hosts if self.allowed_hosts is not None else local_hosts()

    def origins(self) -> tuple[str, ...]:
        if self.allowed_origins is not None:
            return self.allowed_origins
        allowed = self.hosts()
        if allowed is None:
            return ("*",)  # no protection asked for: any origin
        return local_origins() + tuple(
            f"{scheme}://{host}" for scheme in ("http", "https") for host in allowed
        )


class HostCheck:
    """The ASGI wrapper refusing a request whose Origin or Host `Security` does not allow
    (403, 421); it reads the headers `HeaderLimits` left in the scope (wrappers.py)."""

    __slots__ = ("_seen", "app", "hosts", "origins", "trusted")

    def __init__(self, app: ASGIApp, security: Security) -> None:
        self.app = direct(app)
        self.hosts = security.hosts()
        self.origins = security.origins()
        self.trusted = frozenset(security.trusted_proxies)
        self._seen: dict[tuple[bytes | None, bytes | None], Refusal | None] = {}

    @staticmethod
    def around(app: ASGIApp, security: Security) -> ASGIApp:
        """`app` behind the check, or `app` itself when nothing would ever be refused."""
        check = HostCheck(app, security)
        return app if check.hosts is None and check.origins == ("*",) else check

    def __call__(self, scope: Scope, receive: Receive, send: Send) -> Awaitable[None]:
        headers = scope[HEADERS]
        host = headers.get(b"host")
        if self.trusted:
            host = self._forwarded(scope, headers, host)
        key = (headers.get(b"origin"), host)
        seen = self._seen
        verdict = seen[key] if key in seen else self._remember(key)
        if verdict is not None:
            return refuse(send, verdict)
        return self.app(scope, receive, send)

    def _forwarded(self, scope: Scope, headers: Headers, host: bytes | None) -> bytes | None:
        """Behind a trusted proxy, the host the client asked it for."""
        client = scope.get("client")
        if client and client[0] in self.trusted:
            forwarded = headers.get(b"x-forwarded-host")
            if forwarded is not None:
                return forwarded.split(b",", 1)[0].strip()
        return host

    def _remember(self, key: tuple[bytes | None, bytes | None]) -> Refusal | None:
        """The verdict on an (Origin, Host) pair, remembered for the usual few pairs."""
        verdict = self._judge(*key)
        if len(self._seen) < 256:
            self._seen[key] = verdict
        return verdict

    def _judge(self, origin: bytes | None, host: bytes | None) -> Refusal | None:
        if origin is not None and not origin_allowed(origin.decode("latin-1"), self.origins):
            return forbidden_origin()
        if self.hosts is None:
            return None
        if not host_allowed(host.decode("latin-1") if host else None, self.hosts):
            return misdirected_host()
        return None
