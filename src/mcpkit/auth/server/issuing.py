"""Minting tokens: JWT access tokens (RFC 9068) and opaque, rotating refresh tokens.

An access token carries iss, sub, aud (the resource), client_id, scope (space-separated),
iat, nbf, exp and a jti of the form "<grant id>.<random>", so revoking a grant (a replayed
code, a reused refresh token, a revoked refresh token) also marks its access tokens inactive
at introspection. A refresh token is 256 random bits; only its digest is stored, under its
grant (its rotation family).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

from mcpkit.auth.server.keys import KeyRing
from mcpkit.auth.server.options import AuthServerOptions
from mcpkit.auth.server.store import AuthStore, RefreshRecord, digest


@dataclass(frozen=True)
class Grant:
    """What a token is for: who (subject), through which client, which scopes, which
    audience, under which grant id."""

    grant_id: str
    client_id: str
    subject: str
    scopes: tuple[str, ...]
    resource: str


def new_id() -> str:
    return secrets.token_urlsafe(16)


def grant_of(jti: str) -> str:
    """The grant id inside an access token's jti."""
    return jti.split(".", 1)[0]


class TokenMinter:
    def __init__(self, options: AuthServerOptions, store: AuthStore, keys: KeyRing) -> None:
        self._options = options
        self._store = store
        self._keys = keys

    async def tokens(self, grant: Grant, refresh: bool) -> dict[str, Any]:
        """The token response (RFC 6749 section 5.1) for `grant`, with a refresh token in
        the grant's family when `refresh`."""
        options = self._options
        now = int(options.clock())
        claims: dict[str, Any] = {
            "iss": options.issuer,
            "sub": grant.subject,
            "aud": grant.resource,
            "client_id": grant.client_id,
            "iat": now,
            "nbf": now,
            "exp": now + options.access_token_ttl,
            "jti": f"{grant.grant_id}.{secrets.token_urlsafe(9)}",
        }
        if grant.scopes:
            claims["scope"] = " ".join(grant.scopes)
        response: dict[str, Any] = {
            "access_token": await self._keys.sign(claims),
            "token_type": "Bearer",
            "expires_in": options.access_token_ttl,
        }
        if grant.scopes:
            response["scope"] = claims["scope"]
        if refresh:
            response["refresh_token"] = await self._refresh_token(grant, now)
        return response

    async def _refresh_token(self, grant: Grant, now: int) -> str:
        token = secrets.token_urlsafe(32)
        record = RefreshRecord(
            token_hash=digest(token),
            grant_id=grant.grant_id,
            client_id=grant.client_id,
            subject=grant.subject,
            scopes=grant.scopes,
            resource=grant.resource,
            expires_at=now + self._options.refresh_token_ttl,
        )
        await self._store.save_refresh(record)
        return token

    async def revoke_grant(self, grant_id: str) -> None:
        """Revoke a whole grant: its refresh tokens at once, its access tokens (at
        introspection) until the last of them would have expired."""
        until = self._options.clock() + self._options.access_token_ttl + 60
        await self._store.revoke(grant_id, until)
