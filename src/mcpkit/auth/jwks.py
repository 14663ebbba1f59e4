"""The signing keys of an authorization server, fetched from its JWKS URL (or asked of it, in
the same process) and kept.

Keys are fetched on first use and kept for `max_age` seconds. A token naming a key id we do
not hold makes us fetch again (the server rotated its keys), but at most once every
`refetch_interval` seconds, and only one fetch runs at a time: a flood of tokens with made-up
key ids cannot turn us into a weapon against the authorization server. A JWKS that cannot be
fetched (down, slow, oversized, not JSON) fails verification closed.

Time is read from `clock` (default `time.monotonic`: only intervals matter here); a test
passes a fake one to move past `max_age` or `refetch_interval` without waiting.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpx

from mcpkit.auth.documents import MAX_BYTES, TIMEOUT, DocumentUnavailable, fetch_json
from mcpkit.errors import MCPError


class KeysUnavailable(MCPError):
    """No usable key (the message is safe to show)."""


class JWKSCache:
    """The keys at `url` (a JWK Set), by key id (see the module docstring). `source`, in
    place of fetching `url`, returns the JWK Set (an authorization server in this process);
    `clock`: seconds, read for `max_age` and `refetch_interval`."""

    def __init__(
        self,
        url: str,
        *,
        source: Callable[[], Awaitable[Any]] | None = None,
        max_age: float = 300.0,
        refetch_interval: float = 30.0,
        timeout: float = TIMEOUT,
        max_bytes: int = MAX_BYTES,
        client: httpx.AsyncClient | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.url = url
        self._clock = clock
        self.max_age = max_age
        self.refetch_interval = refetch_interval
        self._timeout = timeout
        self._max_bytes = max_bytes
        self._client = client
        self._source = source
        self._keys: dict[str, _Key] = {}  # by kid
        self._anonymous: list[_Key] = []  # keys without a kid
        self._fetched_at: float | None = None
        self._lock = asyncio.Lock()
        self.fetches = 0

    async def key(self, kid: str | None, algorithm: str) -> Any:
        """The key (a `cryptography` public key) that signed a token whose header names `kid`
        and `alg`. Raises KeysUnavailable."""
        now = self._clock()
        if self._fetched_at is None or now - self._fetched_at > self.max_age:
            await self._refresh(now, force=True)
        found = self._find(kid, algorithm)
        if found is None and self._may_refetch(now):
            await self._refresh(now, force=False)
            found = self._find(kid, algorithm)
        if found is None:
            raise KeysUnavailable("the token was signed with a key the issuer does not publish")
        return found

    def _find(self, kid: str | None, algorithm: str) -> Any:
        if kid is not None:
            found = self._keys.get(kid)
            return found.key if found is not None and found.fits(algorithm) else None
        fitting = [key for key in self._anonymous if key.fits(algorithm)]
        return fitting[0].key if len(fitting) == 1 else None

    def _may_refetch(self, now: float) -> bool:
        return self._fetched_at is None or now - self._fetched_at >= self.refetch_interval

    async def _refresh(self, now: float, *, force: bool) -> None:
        async with self._lock:
            fetched = self._fetched_at
            if fetched is not None and fetched >= now:  # another task just fetched
                return
            if not force and not self._may_refetch(self._clock()):
                return
            self._fetched_at = self._clock()
            self.fetches += 1
            try:
                document = await self._fetch()
            except DocumentUnavailable as exc:
                if force and not self._keys and not self._anonymous:
                    self._fetched_at = None  # nothing to serve from: try again next time
                raise KeysUnavailable(f"the issuer's keys are unavailable: {exc}") from None
            self._load(document)

    async def _fetch(self) -> Any:
        if self._source is not None:
            return await self._source()
        if self._client is not None:
            return await self._get(self._client)
        async with httpx.AsyncClient(trust_env=False) as client:
            return await self._get(client)

    async def _get(self, client: httpx.AsyncClient) -> Any:
        return await fetch_json(
            client, "GET", self.url, max_bytes=self._max_bytes, timeout=self._timeout
        )

    def _load(self, document: Any) -> None:
        import jwt

        if not isinstance(document, dict) or not isinstance(document.get("keys"), list):
            raise KeysUnavailable("the issuer's JWKS is not a JWK Set")
        keys: dict[str, _Key] = {}
        anonymous: list[_Key] = []
        for entry in document["keys"]:
            if not isinstance(entry, dict) or entry.get("use", "sig") != "sig":
                continue
            try:
                parsed = jwt.PyJWK(entry)
            except (jwt.PyJWKError, jwt.InvalidKeyError, TypeError, ValueError):
                continue  # a key type or curve we do not support: not ours to use
            declared = entry.get("alg")
            kty = entry.get("kty")
            algorithm = declared if isinstance(declared, str) else None
            key = _Key(parsed.key, kty if isinstance(kty, str) else "", algorithm)
            kid = entry.get("kid")
            if isinstance(kid, str):
                keys[kid] = key
            else:
                anonymous.append(key)
        self._keys, self._anonymous = keys, anonymous


class _Key:
    """A published key and what it may verify."""

    __slots__ = ("algorithm", "key", "key_type")

    def __init__(self, key: Any, key_type: str, algorithm: str | None) -> None:
        self.key = key
        self.key_type = key_type
        self.algorithm = algorithm  # the JWK's own "alg", when it names one

    def fits(self, algorithm: str) -> bool:
        """Only an algorithm of the key's own family, and the one it names if it names one:
        never HMAC with a public key, never RS256 with a key meant for PS256."""
        if self.algorithm is not None:
            return self.algorithm == algorithm
        families = {"RSA": ("RS", "PS"), "EC": ("ES",), "OKP": ("Ed",)}.get(self.key_type, ())
        return bool(families) and algorithm.startswith(families)
