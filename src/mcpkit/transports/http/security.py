"""Origin and Host checks on every request (DNS rebinding protection), proxy-aware.

A browser page on another site can reach a server bound to localhost; checking `Origin`
stops its requests, and checking `Host` stops a rebound DNS name from reaching us at all.
Behind a reverse proxy the proxy's `X-Forwarded-Host` is believed only when the peer is one
of `trusted_proxies`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

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


class Checker:
    def __init__(self, security: Security) -> None:
        self.hosts = security.hosts()
        self.origins = security.origins()
        self.trusted = frozenset(security.trusted_proxies)
        self._seen: dict[tuple[bytes | None, bytes | None], Refusal | None] = {}

    def check(self, scope: dict[str, Any], headers: dict[bytes, bytes]) -> Refusal | None:
        """The verdict on a request's Origin and Host (remembered for the usual few pairs)."""
        host = headers.get(b"host")
        client = scope.get("client")
        if self.trusted and client and client[0] in self.trusted:
            forwarded = headers.get(b"x-forwarded-host")
            if forwarded is not None:
                host = forwarded.split(b",", 1)[0].strip()
        key = (headers.get(b"origin"), host)
        seen = self._seen
        if key in seen:
            return seen[key]
        verdict = self._judge(*key)
        if len(seen) < 256:
            seen[key] = verdict
        return verdict

    def _judge(self, origin: bytes | None, host: bytes | None) -> Refusal | None:
        if origin is not None and not origin_allowed(origin.decode("latin-1"), self.origins):
            return forbidden_origin()
        if self.hosts is None:
            return None
        if not host_allowed(host.decode("latin-1") if host else None, self.hosts):
            return misdirected_host()
        return None
