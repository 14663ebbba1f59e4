"""Verifying bearer tokens: one small interface, three ways to answer it.

`TokenVerifier.verify(token)` returns the verified `Principal` or raises `InvalidToken`.

- `JWTVerifier`: JWT access tokens (RFC 9068) checked locally against the issuer's keys (a
  JWKS URL, see jwks.py, or keys you give): the signature with an algorithm from an allow
  list (never `none`, never HMAC with a public key), the issuer, the audience (RFC 8707: the
  token must be issued for *this* resource), `exp` and `nbf` with a small leeway, an `iat`
  not in the future.
- `IntrospectionVerifier`: asks the authorization server (RFC 7662) and checks the answer the
  same way (active, audience, issuer, expiry).
- `StaticTokenVerifier`: a fixed table of tokens, for tests and internal deployments.

A verification costs a signature check or a round trip, and happens on every HTTP request, so
successful ones are kept (`VerifiedTokens`: bounded, keyed by a SHA-256 of the token, never
past the token's own expiry). `verify_until` also says until when an answer is kept, so that
`BearerAuth` can skip even that lookup for a header it has seen, never for longer. Tokens are
never logged, never put in an error message, and never passed on to anyone.

The verifiers read the time from `clock` (default `time.time`: token times are epoch
seconds); a test passes a fake one to move past an expiry or a `cache_ttl` without waiting.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

import httpx

from mcpkit.auth.documents import DocumentUnavailable, fetch_json
from mcpkit.auth.errors import InvalidToken
from mcpkit.auth.jwks import JWKSCache, KeysUnavailable
from mcpkit.auth.jws import CompactJWS, MalformedJWS, parse, signature_valid
from mcpkit.auth.wellknown import canonical_resource
from mcpkit.runtime.principal import Principal

JSONObject = dict[str, Any]
ASYMMETRIC = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512")


class TokenVerifier(Protocol):
    async def verify(self, token: str) -> Principal:
        """The principal the token stands for. Raises InvalidToken."""
        ...


def principal_of(claims: Mapping[str, Any]) -> Principal:
    """The principal of verified claims (RFC 9068 / RFC 7662 names). Raises InvalidToken
    without a subject (or, for a machine's token, a client id)."""
    client_id = claims.get("client_id", claims.get("azp"))
    client_id = client_id if isinstance(client_id, str) else None
    subject = claims.get("sub", client_id)
    if not isinstance(subject, str) or not subject:
        raise InvalidToken("the token names no subject")
    scope = claims.get("scope")
    if isinstance(scope, str):
        scopes = frozenset(scope.split())
    else:
        listed = claims.get("scp")
        scopes = (
            frozenset(s for s in listed if isinstance(s, str))
            if isinstance(listed, list)
            else frozenset()
        )
    expiry = claims.get("exp")
    expires_at = float(expiry) if isinstance(expiry, int | float) else None
    return Principal(subject, client_id, scopes, dict(claims), expires_at)


class VerifiedTokens:
    """Tokens verified lately, each until its expiry or `ttl` seconds; at most `size`, the
    oldest verified leaving first (a hit does not reorder: a token evicted while in use costs
    one more verification, and every request saves the bookkeeping)."""

    def __init__(self, size: int = 4096, ttl: float | None = None) -> None:
        self.size = size
        self.ttl = ttl
        self._entries: dict[bytes, tuple[Principal, float]] = {}

    def entry(self, token: str, now: float) -> tuple[Principal, float] | None:
        """The principal kept for `token` and until when it is kept, or None."""
        key = hashlib.sha256(token.encode()).digest()
        entry = self._entries.get(key)
        if entry is None:
            return None
        if now >= entry[1]:
            del self._entries[key]
            return None
        return entry

    def put(self, token: str, principal: Principal, now: float) -> float:
        """Keep `principal` for `token`; until when it is kept (0.0: not kept)."""
        until = principal.expires_at if principal.expires_at is not None else float("inf")
        if self.ttl is not None:
            until = min(until, now + self.ttl)
        if until <= now or self.size <= 0:
            return 0.0
        entries = self._entries
        entries[hashlib.sha256(token.encode()).digest()] = (principal, until)
        if len(entries) > self.size:
            del entries[next(iter(entries))]
        return until


def _check_times(claims: Mapping[str, Any], now: float, leeway: float) -> None:
    exp = claims.get("exp")
    if not isinstance(exp, int | float):
        raise InvalidToken("the token has no expiry")
    if now > exp + leeway:
        raise InvalidToken("the token has expired")
    nbf = claims.get("nbf")
    if isinstance(nbf, int | float) and now + leeway < nbf:
        raise InvalidToken("the token is not valid yet")
    iat = claims.get("iat")
    if isinstance(iat, int | float) and iat > now + leeway:
        raise InvalidToken("the token was issued in the future")


def _check_audience(claims: Mapping[str, Any], audience: str) -> None:
    aud = claims.get("aud")
    listed = [aud] if isinstance(aud, str) else aud if isinstance(aud, list) else []
    for value in listed:
        if not isinstance(value, str):
            continue
        try:
            if canonical_resource(value) == audience:
                return
        except ValueError:
            continue
    raise InvalidToken("the token was not issued for this resource")


class JWTVerifier:
    """JWT access tokens signed by `issuer` for `audience` (the resource's canonical URI),
    checked with the keys at `jwks_url` or the given `keys` (cryptography public keys or PEM
    text). `leeway`: seconds of clock skew allowed; `require_typ`: only `at+jwt` tokens;
    `clock`: the current time in epoch seconds (see the module docstring)."""

    def __init__(
        self,
        *,
        issuer: str,
        audience: str,
        jwks_url: str | None = None,
        keys: Iterable[Any] = (),
        algorithms: Iterable[str] = ASYMMETRIC,
        leeway: float = 30.0,
        require_typ: bool = False,
        cache_size: int = 4096,
        jwks: JWKSCache | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.issuer = issuer
        self._clock = clock
        self.audience = canonical_resource(audience)
        self.algorithms = tuple(a for a in algorithms if a in ASYMMETRIC)
        if not self.algorithms:
            raise ValueError(f"algorithms must name asymmetric ones of {', '.join(ASYMMETRIC)}")
        self.leeway = leeway
        self.require_typ = require_typ
        self._keys = [_public_key(key) for key in keys]
        if jwks is None and jwks_url is not None:
            jwks = JWKSCache(jwks_url)
        if jwks is None and not self._keys:
            raise ValueError("give jwks_url or keys")
        self.jwks = jwks
        self._verified = VerifiedTokens(cache_size)

    async def verify(self, token: str) -> Principal:
        return (await self.verify_until(token))[0]

    async def verify_until(self, token: str) -> tuple[Principal, float]:
        """`verify`, and until when (`clock()` seconds) this verifier would give the same
        answer for this token without checking it again: as long as it keeps the token
        (0.0 with `cache_size=0`). `BearerAuth` reuses its answer no longer than that."""
        now = self._clock()
        known = self._verified.entry(token, now)
        if known is not None:
            return known
        try:
            jws = parse(token)
        except MalformedJWS as exc:
            raise InvalidToken(str(exc)) from None
        header = jws.header
        algorithm = header.get("alg")
        if algorithm not in self.algorithms:
            raise InvalidToken("the token's signing algorithm is not accepted")
        typ = header.get("typ")
        typ = typ.lower() if isinstance(typ, str) else None
        access = typ in ("at+jwt", "application/at+jwt")
        if not access and (self.require_typ or typ not in (None, "jwt")):
            raise InvalidToken("the token is not an access token")
        await self._check_signature(jws, algorithm)
        claims = jws.payload
        if claims.get("iss") != self.issuer:
            raise InvalidToken("the token was issued by another server")
        _check_audience(claims, self.audience)
        _check_times(claims, now, self.leeway)
        principal = principal_of(claims)
        return principal, self._verified.put(token, principal, now)

    async def _check_signature(self, jws: CompactJWS, algorithm: str) -> None:
        candidates = list(self._keys)
        if self.jwks is not None:
            kid = jws.header.get("kid")
            try:
                candidates.append(
                    await self.jwks.key(kid if isinstance(kid, str) else None, algorithm)
                )
            except KeysUnavailable as exc:
                if not candidates:
                    raise InvalidToken(str(exc)) from None
        if not any(signature_valid(jws, algorithm, key) for key in candidates):
            raise InvalidToken("the token's signature is invalid")


def _public_key(key: Any) -> Any:
    if isinstance(key, str | bytes):
        from cryptography.hazmat.primitives.serialization import load_pem_public_key

        return load_pem_public_key(key.encode() if isinstance(key, str) else key)
    return key


class IntrospectionVerifier:
    """Tokens checked by the authorization server's introspection endpoint (RFC 7662), as
    `client_id` / `client_secret` (HTTP Basic). The answer must be active, for `audience`
    (the resource's canonical URI), from `issuer` when given, and unexpired; a positive
    answer is kept `cache_ttl` seconds (never past the token's expiry). `clock`: the current
    time in epoch seconds (see the module docstring)."""

    def __init__(
        self,
        url: str,
        *,
        client_id: str,
        client_secret: str,
        audience: str,
        issuer: str | None = None,
        cache_ttl: float = 60.0,
        leeway: float = 30.0,
        timeout: float = 5.0,
        client: httpx.AsyncClient | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.url = url
        self._clock = clock
        self.audience = canonical_resource(audience)
        self.issuer = issuer
        self.leeway = leeway
        self._auth = (client_id, client_secret)
        self._timeout = timeout
        self._client = client
        self._verified = VerifiedTokens(ttl=cache_ttl)

    async def verify(self, token: str) -> Principal:
        return (await self.verify_until(token))[0]

    async def verify_until(self, token: str) -> tuple[Principal, float]:
        """`verify`, and until when this verifier would give the same answer without asking
        the authorization server again (at most `cache_ttl` seconds after it last asked)."""
        now = self._clock()
        known = self._verified.entry(token, now)
        if known is not None:
            return known
        answer = await self._introspect(token)
        if not isinstance(answer, dict) or answer.get("active") is not True:
            raise InvalidToken("the token is not active")
        if self.issuer is not None and answer.get("iss") != self.issuer:
            raise InvalidToken("the token was issued by another server")
        _check_audience(answer, self.audience)
        _check_times(answer, now, self.leeway)
        principal = principal_of(answer)
        return principal, self._verified.put(token, principal, now)

    async def _introspect(self, token: str) -> Any:
        form = {"token": token, "token_type_hint": "access_token"}
        try:
            if self._client is not None:
                return await self._post(self._client, form)
            async with httpx.AsyncClient(trust_env=False) as client:
                return await self._post(client, form)
        except DocumentUnavailable as exc:
            raise InvalidToken(f"the token could not be checked: {exc}") from None

    async def _post(self, client: httpx.AsyncClient, form: dict[str, str]) -> Any:
        return await fetch_json(
            client, "POST", self.url, timeout=self._timeout, data=form, auth=self._auth
        )


class StaticTokenVerifier:
    """A fixed table: token -> principal (compared in constant time)."""

    def __init__(self, tokens: Mapping[str, Principal]) -> None:
        self._tokens = [(token.encode(), principal) for token, principal in tokens.items()]

    async def verify(self, token: str) -> Principal:
        given = token.encode()
        found = None
        for known, principal in self._tokens:  # every entry, whatever matches
            if hmac.compare_digest(known, given):
                found = principal
        if found is None:
            raise InvalidToken("the token is not valid")
        return found
