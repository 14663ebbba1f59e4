"""The OAuth client against the official SDK's authorization server (mcp 2.3.0): its
`MCPServer` with `auth_server_provider=` serves the OAuth endpoints (metadata, dynamic
registration, /authorize, /token, /revoke: the SDK's own request validation) beside its
protected MCP endpoint, and checks every request's bearer token. The provider below is the
storage the SDK leaves to the application; it approves at once, as a logged-in user would.
Our client discovers, registers, logs in (PKCE, state, resource), refreshes and calls a tool,
in both eras, through real HTTP on loopback."""

from __future__ import annotations

import contextlib
import secrets
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from mcpkit import Client
from mcpkit.auth.client import Headless, MemoryTokenStore, OAuth
from mcpkit.client import HTTPOptions
from mcpkit.errors import MCPError
from tests.http.servers import serving, unused_port


class ApprovingProvider:
    """The SDK's OAuthAuthorizationServerProvider, in memory: every authorization approved
    for the user "alice"; tokens opaque random strings (the SDK checks them through
    `load_access_token`)."""

    def __init__(self, access_ttl: int = 3600) -> None:
        self.access_ttl = access_ttl
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}
        self.refreshed = 0

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info

    async def authorize(
        self, client: OAuthClientInformationFull, params: AuthorizationParams
    ) -> str:
        code = secrets.token_urlsafe(24)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or ["mcp"],
            expires_at=time.time() + 60,
            client_id=client.client_id or "",
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
            subject="alice",
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        return self.codes.get(authorization_code)

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        del self.codes[authorization_code.code]
        return self._issue(client, authorization_code.scopes, authorization_code.resource)

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        del self.refresh[refresh_token.token]  # rotation
        self.refreshed += 1
        return self._issue(client, scopes or refresh_token.scopes, refresh_token.resource)

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access.get(token)
        if found is None or (found.expires_at is not None and found.expires_at < time.time()):
            return None
        return found

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)

    def expire_access_tokens(self) -> None:
        for token in self.access.values():
            token.expires_at = int(time.time()) - 1

    def _issue(
        self, client: OAuthClientInformationFull, scopes: list[str], resource: str | None
    ) -> OAuthToken:
        access, refresh = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        client_id = client.client_id or ""
        expires = int(time.time()) + self.access_ttl
        self.access[access] = AccessToken(
            token=access,
            client_id=client_id,
            scopes=scopes,
            expires_at=expires,
            resource=resource,
            subject="alice",
        )
        self.refresh[refresh] = RefreshToken(
            token=refresh, client_id=client_id, scopes=scopes, resource=resource, subject="alice"
        )
        return OAuthToken(
            access_token=access,
            token_type="Bearer",
            expires_in=self.access_ttl,
            refresh_token=refresh,
            scope=" ".join(scopes),
        )


@contextlib.asynccontextmanager
async def official_protected_server() -> AsyncIterator[tuple[str, ApprovingProvider]]:
    port = unused_port()
    base = f"http://127.0.0.1:{port}"
    provider = ApprovingProvider()
    server = MCPServer(
        "official-protected",
        auth_server_provider=provider,
        auth=AuthSettings(
            issuer_url=base,
            resource_server_url=f"{base}/mcp",
            required_scopes=["mcp"],
            validate_token_resource=True,  # a token for another resource is refused
            client_registration_options=ClientRegistrationOptions(
                enabled=True, valid_scopes=["mcp"], default_scopes=["mcp"]
            ),
            revocation_options=RevocationOptions(enabled=True),
        ),
    )

    @server.tool()
    def whoami() -> str:
        """The caller, as the server saw it."""
        return "alice"

    async with serving(server.streamable_http_app(), port):
        yield f"{base}/mcp", provider


async def call_whoami(url: str, oauth: OAuth, mode: str) -> tuple[str, Any]:
    async with Client(url, auth=oauth, mode=mode, timeout=10) as client:
        result = await client.call_tool("whoami", {})
        return client.era, result.content[0].text  # type: ignore[union-attr]


@pytest.mark.parametrize(("mode", "era"), [("auto", "per-request"), ("handshake", "handshake")])
async def test_the_whole_flow_against_the_official_sdk(mode: str, era: str) -> None:
    async with official_protected_server() as (url, provider):
        store = MemoryTokenStore()
        oauth = OAuth(store=store, approval=Headless())
        assert await call_whoami(url, oauth, mode) == (era, "alice")
        # Registered once by dynamic registration, one grant, the token bound to this server.
        assert len(provider.clients) == 1
        [token] = provider.access.values()
        assert token.resource == url and token.scopes == ["mcp"]
        assert store.load(url) is not None  # stored under the server's URL


async def test_an_expired_token_is_refreshed_and_the_request_resent() -> None:
    async with official_protected_server() as (url, provider):
        oauth = OAuth(store=MemoryTokenStore(), approval=Headless())
        await call_whoami(url, oauth, "handshake")
        provider.expire_access_tokens()  # the server now answers 401 invalid_token
        assert await call_whoami(url, oauth, "handshake") == ("handshake", "alice")
        assert provider.refreshed == 1 and len(provider.clients) == 1


async def test_without_a_login_the_official_server_refuses() -> None:
    async with official_protected_server() as (url, provider):
        with pytest.raises(MCPError):
            async with Client(url, mode="handshake", timeout=10) as client:
                await client.list_tools()
        assert provider.access == {}


async def test_auth_is_for_urls_only_and_given_once() -> None:
    oauth = OAuth(store=MemoryTokenStore(), approval=Headless())
    with pytest.raises(ValueError, match="stdio server takes its credentials from its env"):
        Client(["python", "server.py"], auth=oauth)
    with pytest.raises(ValueError, match="not both"):
        Client("http://127.0.0.1:9/mcp", auth=oauth, http=HTTPOptions(auth=oauth))
