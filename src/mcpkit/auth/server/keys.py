"""Signing keys: the newest signs access tokens, every unexpired one is in the JWKS.

Keys live in the store (so a restart keeps issued tokens verifiable, and processes sharing
the store share the keys). A key signs for `rotation` seconds; then a new one is made and the
old one stays published for another `rotation` seconds, longer than any token it signed
lives. Each process re-reads the keys every minute, so a key another process made is picked
up. PyJWT does the JOSE work (signing, JWK export, verification), imported on first use;
`cryptography` makes the keys.
"""

from __future__ import annotations

import asyncio
import secrets
from dataclasses import dataclass
from typing import Any

from mcpkit._extras import optional_dependency
from mcpkit.auth.errors import InvalidToken
from mcpkit.auth.jws import MalformedJWS, parse
from mcpkit.auth.server.store import AuthStore, KeyRecord

RELOAD_EVERY = 60.0
ACCESS_TOKEN_TYPES = ("at+jwt", "application/at+jwt")


@dataclass(frozen=True)
class SigningKey:
    kid: str
    algorithm: str
    private: Any
    public: Any
    jwk: dict[str, Any]
    created_at: float


class KeyRing:
    def __init__(
        self, store: AuthStore, issuer: str, algorithm: str, rotation: float, clock: Any
    ) -> None:
        self._store = store
        self._issuer = issuer
        self._algorithm = algorithm
        self._rotation = rotation
        self._clock = clock
        self._keys: dict[str, SigningKey] = {}
        self._loaded_at = float("-inf")
        self._lock = asyncio.Lock()

    async def _refresh(self, force: bool = False) -> None:
        now = self._clock()
        if not force and now - self._loaded_at < RELOAD_EVERY:
            return
        records = [r for r in await self._store.keys() if r.expires_at > now]
        known = self._keys
        self._keys = {r.kid: known.get(r.kid) or _parse(r) for r in records}
        self._loaded_at = now

    async def signing_key(self) -> SigningKey:
        """The key to sign with now, making one when none is current."""
        await self._refresh()
        newest = self._newest()
        if newest is None or newest.created_at + self._rotation <= self._clock():
            async with self._lock:
                await self._refresh(force=True)
                newest = self._newest()
                if newest is None or newest.created_at + self._rotation <= self._clock():
                    await self.rotate()
                    newest = self._newest()
        assert newest is not None
        return newest

    async def rotate(self) -> None:
        """Make a new signing key now; the current one stays published."""
        pem = await asyncio.to_thread(_generate, self._algorithm)
        newest = self._newest()  # strictly newer, even on a clock that stands still
        now = max(self._clock(), newest.created_at + 0.001 if newest else 0.0)
        kid = secrets.token_urlsafe(12)
        expires_at = now + 2 * self._rotation
        await self._store.add_key(KeyRecord(kid, self._algorithm, pem, now, expires_at))
        await self._refresh(force=True)

    def _newest(self) -> SigningKey | None:
        return max(self._keys.values(), key=lambda k: k.created_at, default=None)

    async def jwks(self) -> dict[str, Any]:
        """The JWK Set of every published key (current and previous)."""
        await self.signing_key()
        return {"keys": [key.jwk for key in self._keys.values()]}

    async def sign(self, claims: dict[str, Any]) -> str:
        """`claims` as a JWT access token (RFC 9068: typ at+jwt, kid set)."""
        with optional_dependency():
            import jwt

        key = await self.signing_key()
        headers = {"kid": key.kid, "typ": "at+jwt"}
        return jwt.encode(claims, key.private, algorithm=key.algorithm, headers=headers)

    async def verify(self, token: str) -> dict[str, Any]:
        """The claims of an access token this server signed and that has not expired.
        Raises InvalidToken otherwise (bad signature, `alg: none`, another issuer, ...)."""
        with optional_dependency():
            import jwt

        try:  # our parser first: PyJWT's json.loads raises RecursionError on deep nesting
            header = parse(token).header
        except MalformedJWS:
            raise InvalidToken("not a JWT") from None
        if str(header.get("typ", "")).lower() not in ACCESS_TOKEN_TYPES:
            raise InvalidToken("not an access token")
        kid = header.get("kid")
        await self._refresh()
        if kid not in self._keys:
            await self._refresh(force=True)
        key = self._keys.get(kid) if isinstance(kid, str) else None
        if key is None:
            raise InvalidToken("unknown signing key")
        required = ["exp", "iat", "iss", "sub", "jti", "client_id"]
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key.public,
                algorithms=[key.algorithm],
                issuer=self._issuer,
                options={
                    "require": required,
                    "verify_aud": False,
                    "verify_exp": False,
                    "verify_nbf": False,
                    "verify_iat": False,
                },
            )
        except jwt.PyJWTError as exc:
            raise InvalidToken(type(exc).__name__) from None
        now = self._clock()  # the server's clock, not PyJWT's, decides what has expired
        if not now < float(claims["exp"]) or float(claims.get("nbf", 0)) > now:
            raise InvalidToken("expired or not yet valid")
        return claims


def _generate(algorithm: str) -> str:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec, rsa

    if algorithm == "RS256":
        key: Any = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    else:
        key = ec.generate_private_key(ec.SECP256R1())
    return str(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ).decode()
    )


def _parse(record: KeyRecord) -> SigningKey:
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    with optional_dependency():
        from jwt.algorithms import ECAlgorithm, RSAAlgorithm

    private: Any = load_pem_private_key(record.private_pem.encode(), password=None)
    public = private.public_key()
    exporter: Any = RSAAlgorithm if record.algorithm == "RS256" else ECAlgorithm
    jwk = dict(exporter.to_jwk(public, as_dict=True))
    jwk.update(kid=record.kid, use="sig", alg=record.algorithm)
    return SigningKey(record.kid, record.algorithm, private, public, jwk, record.created_at)
