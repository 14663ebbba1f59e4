"""Token revocation (RFC 7009) and introspection (RFC 7662).

Both take a token of either kind. A refresh token is found by its digest; an access token is a
JWT this server signed (verified with its keys: a token with `alg: none`, a wrong signature or
another issuer is simply not one of ours). Revoking a refresh token revokes its whole grant
(RFC 7009 section 2.1 allows it, and its access tokens then introspect as inactive); revoking
an access token revokes that token. A client can only revoke its own tokens; the answer is 200
whether or not there was anything to revoke, so it tells nothing about other tokens.

Introspection is for resource servers: the caller authenticates as a client configured with
`introspect=True`; anyone else is told every token is inactive (RFC 7662 section 4).
"""

from __future__ import annotations

from typing import Any

from mcpkit.auth.errors import InvalidToken
from mcpkit.auth.server.asgi import NO_STORE, HTTPRequest, HTTPResponse, json_response
from mcpkit.auth.server.client_auth import ClientAuthenticator
from mcpkit.auth.server.issuing import TokenMinter, grant_of
from mcpkit.auth.server.keys import KeyRing
from mcpkit.auth.server.options import AuthServerOptions
from mcpkit.auth.server.store import AuthStore, digest

_CLAIMS = ("scope", "client_id", "sub", "aud", "iss", "exp", "iat", "nbf", "jti")


class TokenRegistry:
    """The revocation and introspection endpoints."""

    def __init__(
        self,
        options: AuthServerOptions,
        store: AuthStore,
        authenticator: ClientAuthenticator,
        keys: KeyRing,
        minter: TokenMinter,
    ) -> None:
        self._options = options
        self._store = store
        self._authenticator = authenticator
        self._keys = keys
        self._minter = minter

    async def revoke(self, request: HTTPRequest) -> HTTPResponse:
        """Raises OAuthErrorResponse (invalid_request, invalid_client)."""
        params = request.form()
        endpoint = self._options.endpoint("revoke")
        client = await self._authenticator.authenticate(request, params, endpoint)
        token = params.require("token")
        refresh, _ = await self._store.find_refresh(digest(token))
        if refresh is not None:
            if refresh.client_id == client.client_id:
                await self._minter.revoke_grant(refresh.grant_id)
        else:
            claims = await self._access_claims(token)
            if claims is not None and claims["client_id"] == client.client_id:
                await self._store.revoke(claims["jti"], float(claims["exp"]))
        return HTTPResponse(200, b"", [*NO_STORE])

    async def introspect(self, request: HTTPRequest) -> HTTPResponse:
        """Raises OAuthErrorResponse (invalid_request, invalid_client)."""
        params = request.form()
        endpoint = self._options.endpoint("introspect")
        client = await self._authenticator.authenticate(request, params, endpoint)
        token = params.require("token")
        answer: dict[str, Any] = {"active": False}
        if client.introspect:
            answer = await self._describe(token)
        return json_response(200, answer, NO_STORE)

    async def _describe(self, token: str) -> dict[str, Any]:
        claims = await self._access_claims(token)
        if claims is not None:
            described = {name: claims[name] for name in _CLAIMS if name in claims}
            return {"active": True, "token_type": "Bearer", **described}
        refresh, unused = await self._store.find_refresh(digest(token))
        if refresh is None or not unused or refresh.expires_at <= self._options.clock():
            return {"active": False}
        return {
            "active": True,
            "client_id": refresh.client_id,
            "sub": refresh.subject,
            "scope": " ".join(refresh.scopes),
            "aud": refresh.resource,
            "iss": self._options.issuer,
            "exp": int(refresh.expires_at),
        }

    async def _access_claims(self, token: str) -> dict[str, Any] | None:
        """The claims of a live access token of ours, or None."""
        if token.count(".") != 2:
            return None
        try:
            claims = await self._keys.verify(token)
        except InvalidToken:
            return None
        jti = str(claims["jti"])
        if await self._store.is_revoked(jti, grant_of(jti)):
            return None
        return claims
