"""The token endpoint: authorization_code, refresh_token and client_credentials grants.

authorization_code (OAuth 2.1 section 4.1.3): the code is taken from the store at once, so
it is single-use even under races; a code presented again revokes the grant it issued. The
client must be the one the code was issued to, the redirect URI the one of the authorization
request, and the code verifier must match the S256 challenge (RFC 7636).

refresh_token (section 4.3): each refresh token is used once and replaced by a new one of the
same grant (rotation); presenting a rotated token again (reuse: someone holds a copy) revokes
the whole grant, for the thief and the client alike.

client_credentials (section 4.2): a confidential client gets a token for itself (`sub` is its
client id), never a refresh token.

Every answer carries Cache-Control: no-store.
"""

from __future__ import annotations

from mcpkit.auth import pkce
from mcpkit.auth.server.asgi import (
    NO_STORE,
    HTTPRequest,
    HTTPResponse,
    OAuthErrorResponse,
    Params,
    json_response,
)
from mcpkit.auth.server.client_auth import ClientAuthenticator
from mcpkit.auth.server.clients import OAuthClient
from mcpkit.auth.server.issuing import Grant, TokenMinter, new_id
from mcpkit.auth.server.options import AuthServerOptions
from mcpkit.auth.server.policy import audience, granted_scopes, narrowed_scopes
from mcpkit.auth.server.store import AuthStore, digest


class TokenEndpoint:
    def __init__(
        self,
        options: AuthServerOptions,
        store: AuthStore,
        authenticator: ClientAuthenticator,
        minter: TokenMinter,
    ) -> None:
        self._options = options
        self._store = store
        self._authenticator = authenticator
        self._minter = minter

    async def handle(self, request: HTTPRequest) -> HTTPResponse:
        """Raises OAuthErrorResponse for every refusal (rendered by the app as RFC 6749 JSON)."""
        params = request.form()
        grant_type = params.require("grant_type")
        handlers = {
            "authorization_code": self._authorization_code,
            "refresh_token": self._refresh_token,
            "client_credentials": self._client_credentials,
        }
        handler = handlers.get(grant_type)
        if handler is None:
            raise OAuthErrorResponse("unsupported_grant_type", "grant type not supported")
        endpoint = self._options.endpoint("token")
        client = await self._authenticator.authenticate(request, params, endpoint)
        if grant_type not in client.grant_types:
            raise OAuthErrorResponse("unauthorized_client", f"this client may not use {grant_type}")
        return json_response(200, await handler(client, params), NO_STORE)

    async def _authorization_code(self, client: OAuthClient, params: Params) -> dict[str, object]:
        code, verifier = params.require("code"), params.require("code_verifier")
        redirect_uri = params.get("redirect_uri")
        record, first_use = await self._store.use_code(digest(code))
        if record is None:
            raise OAuthErrorResponse("invalid_grant", "unknown or expired authorization code")
        if not first_use:
            await self._minter.revoke_grant(record.grant_id)
            raise OAuthErrorResponse("invalid_grant", "authorization code already used")
        if record.expires_at <= self._options.clock():
            raise OAuthErrorResponse("invalid_grant", "unknown or expired authorization code")
        if record.client_id != client.client_id:
            raise OAuthErrorResponse(
                "invalid_grant", "authorization code was issued to another client"
            )
        if (record.redirect_uri_given or redirect_uri is not None) and (
            redirect_uri != record.redirect_uri
        ):
            raise OAuthErrorResponse(
                "invalid_grant", "redirect_uri does not match the authorization"
            )
        if not pkce.verify_s256(verifier, record.code_challenge):
            raise OAuthErrorResponse(
                "invalid_grant", "code_verifier does not match the code_challenge"
            )
        self._check_resource(params, record.resource)
        grant = Grant(
            record.grant_id, client.client_id, record.subject, record.scopes, record.resource
        )
        return await self._minter.tokens(grant, "refresh_token" in client.grant_types)

    async def _refresh_token(self, client: OAuthClient, params: Params) -> dict[str, object]:
        token = params.require("refresh_token")
        record, first_use = await self._store.use_refresh(digest(token))
        if record is None or record.expires_at <= self._options.clock():
            raise OAuthErrorResponse("invalid_grant", "unknown, expired or revoked refresh token")
        if not first_use:
            await self._minter.revoke_grant(record.grant_id)
            raise OAuthErrorResponse(
                "invalid_grant", "refresh token already used; the grant is revoked"
            )
        if record.client_id != client.client_id:
            await self._minter.revoke_grant(record.grant_id)
            raise OAuthErrorResponse("invalid_grant", "refresh token was issued to another client")
        scopes = narrowed_scopes(record.scopes, params.get("scope"))
        self._check_resource(params, record.resource)
        grant = Grant(record.grant_id, client.client_id, record.subject, scopes, record.resource)
        return await self._minter.tokens(grant, True)

    async def _client_credentials(self, client: OAuthClient, params: Params) -> dict[str, object]:
        if client.public:
            raise OAuthErrorResponse(
                "unauthorized_client", "a public client cannot use client_credentials"
            )
        scopes = granted_scopes(self._options, client, params.get("scope"))
        resource = audience(self._options, params.all("resource"))
        grant = Grant(new_id(), client.client_id, client.client_id, scopes, resource)
        return await self._minter.tokens(grant, False)

    def _check_resource(self, params: Params, granted: str) -> None:
        asked = params.all("resource")
        if asked and audience(self._options, asked) != granted:
            raise OAuthErrorResponse("invalid_target", "resource differs from the one authorized")
