"""Fetching a small JSON document from a URL a client chose, without being its weapon (SSRF).

A client id that is a URL (a Client ID Metadata Document) or a client's `jwks_uri` makes the
server send a request where the client says. So, before anything is sent, the host is resolved
and every address it resolves to must be public: private, loopback, link-local, multicast,
reserved and unspecified addresses are refused (IPv4-mapped IPv6 included) unless they lie in
`allowed_networks`. The request then goes to the address that was checked (the name is kept
for the Host header and TLS), so a second DNS answer cannot point it elsewhere; no proxy from
the environment is used, no redirect is followed, no compression is accepted, the body is cut
off past `max_bytes`, and the whole exchange past `timeout` seconds.

At most `CONCURRENT_FETCHES` run at once, at most `FETCHES_PER_HOST` to one host (so a host
that answers slowly, which anyone can set up, holds two slots and not all of them), and the
wait for a turn counts within `timeout`. Past `QUEUED_PER_HOST` fetches waiting for one host,
another fails at once: a flood of slow documents costs its sender, not the other clients'
logins.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import SplitResult, urlsplit, urlunsplit

from mcpkit._extras import optional_dependency
from mcpkit.auth.documents import DocumentUnavailable, read_limited
from mcpkit.auth.server.options import CIMDOptions
from mcpkit.auth.untrusted_json import NestedTooDeep, loads
from mcpkit.errors import MCPError

if TYPE_CHECKING:
    import ssl

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
CONCURRENT_FETCHES = 8
FETCHES_PER_HOST = 2
QUEUED_PER_HOST = 8


class FetchRefused(MCPError):
    """The document could not be fetched safely; the message is safe to show."""


@dataclass(frozen=True)
class Fetched:
    """A JSON document and how long it may be cached (None: the server did not say)."""

    document: Any
    max_age: float | None


def is_forbidden_address(address: IPAddress) -> bool:
    """Whether an address is not a public unicast one."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return (
        not address.is_global
        or address.is_multicast
        or address.is_reserved
        or address.is_loopback
        or address.is_link_local
        or address.is_private
        or address.is_unspecified
    )


@dataclass
class _HostTurns:
    """The fetches to one host: who may run, and how many use this entry (running or not)."""

    running: asyncio.Semaphore = field(default_factory=lambda: asyncio.Semaphore(FETCHES_PER_HOST))
    users: int = 0


class GuardedFetcher:
    def __init__(self, options: CIMDOptions) -> None:
        self._options = options
        self._allowed = [ipaddress.ip_network(n, strict=False) for n in options.allowed_networks]
        self._slots = asyncio.Semaphore(CONCURRENT_FETCHES)
        self._hosts: dict[str, _HostTurns] = {}
        self._tls: ssl.SSLContext | None = None

    async def get_json(self, url: str) -> Fetched:
        """The JSON document at `url` (http or https). Raises FetchRefused: among others
        when its turn and the fetch together take longer than `timeout`, or when too many
        fetches to its host are waiting already."""
        parts = urlsplit(url)
        if parts.scheme not in ("https", "http") or not parts.hostname or parts.username:
            raise FetchRefused("not a fetchable URL")
        started = False
        try:
            async with asyncio.timeout(self._options.timeout), self._turn(parts.hostname):
                started = True
                address = await self._resolve(parts)
                return await self._get(parts, address)
        except TimeoutError:
            if not started:
                raise FetchRefused(
                    "too many documents were being fetched to fetch this one in time"
                ) from None
            raise FetchRefused("the document took too long to fetch") from None

    @contextlib.asynccontextmanager
    async def _turn(self, host: str) -> AsyncIterator[None]:
        """Waits for a turn to fetch from `host` (see the module docstring)."""
        turns = self._hosts.setdefault(host, _HostTurns())
        if turns.users >= FETCHES_PER_HOST + QUEUED_PER_HOST:
            raise FetchRefused("too many documents from this host are being fetched; retry later")
        turns.users += 1
        try:
            async with turns.running, self._slots:
                yield
        finally:
            turns.users -= 1
            if turns.users == 0:
                del self._hosts[host]

    async def _resolve(self, parts: SplitResult) -> IPAddress:
        host = parts.hostname or ""
        try:
            addresses = [ipaddress.ip_address(host)]
        except ValueError:
            loop = asyncio.get_running_loop()
            try:
                found = await loop.getaddrinfo(host, parts.port, type=socket.SOCK_STREAM)
            except OSError:
                raise FetchRefused("the document's host does not resolve") from None
            addresses = [ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in found]
        if not addresses:
            raise FetchRefused("the document's host does not resolve")
        for address in addresses:
            allowed = any(address in network for network in self._allowed)
            if is_forbidden_address(address) and not allowed:
                raise FetchRefused("the document's host is not a public address")
        return addresses[0]

    async def _get(self, parts: SplitResult, address: IPAddress) -> Fetched:
        with optional_dependency():
            import httpx

        literal = f"[{address}]" if address.version == 6 else str(address)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        target = urlunsplit((parts.scheme, f"{literal}:{port}", parts.path, parts.query, ""))
        host_header = parts.netloc
        headers = {"host": host_header, "accept": "application/json"}
        headers["accept-encoding"] = "identity"
        extensions = {"sni_hostname": parts.hostname} if parts.scheme == "https" else {}
        try:
            async with httpx.AsyncClient(
                follow_redirects=False, trust_env=False, verify=self._tls_context()
            ) as client:
                request = client.build_request("GET", target, headers=headers)
                request.extensions.update(extensions)
                response = await client.send(request, stream=True)
                try:
                    body = await self._read(response)
                finally:
                    await response.aclose()
        except httpx.HTTPError as exc:
            raise FetchRefused(
                f"the document could not be fetched ({type(exc).__name__})"
            ) from None
        try:
            document = loads(body)
        except NestedTooDeep as exc:
            raise FetchRefused(f"the document is {exc}") from None
        except ValueError:
            raise FetchRefused("the document is not JSON") from None
        return Fetched(document, cache_age(response.headers.get("cache-control")))

    async def _read(self, response: Any) -> bytes:
        limit = self._options.max_bytes
        if 300 <= response.status_code < 400:
            raise FetchRefused("the document's URL redirects; redirects are not followed")
        if response.status_code != 200:
            raise FetchRefused(f"the document's server answered {response.status_code}")
        if response.headers.get("content-encoding", "identity") != "identity":
            raise FetchRefused("the document must not be compressed")
        try:
            return await read_limited(response, limit)
        except DocumentUnavailable as exc:
            raise FetchRefused(str(exc)) from None

    def _tls_context(self) -> ssl.SSLContext:
        if self._tls is None:
            import ssl

            import certifi

            self._tls = ssl.create_default_context(cafile=certifi.where())
        return self._tls


def cache_age(header: str | None) -> float | None:
    """Seconds a response may be cached per its Cache-Control (0: not at all), or None."""
    age: float | None = None
    for directive in (header or "").lower().split(","):
        name, _, value = directive.strip().partition("=")
        if name in ("no-store", "no-cache"):
            return 0.0
        if name == "max-age":
            try:
                age = max(0.0, float(int(value.strip().strip('"'))))
            except ValueError:
                return 0.0
    return age
