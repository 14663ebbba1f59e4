"""The OAuth client against mcpkit's own authorization server (`mcpkit.auth.server`, approving
at once with `dev_approve`) and an mcpkit server whose HTTP app authenticates every request
through its `Authenticator` hook: JWT access tokens verified against the authorization server's
JWKS, scopes required per tool. Both eras, both HTTP transports, refresh with rotation, a
revoked grant, step-up."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import httpx
import jwt
import orjson
import pytest

from mcpkit import Client
from mcpkit.auth.client import Headless, MemoryTokenStore, OAuth
from mcpkit.auth.server import AuthorizationServer, AuthServerOptions
from mcpkit.auth.server import MemoryAuthStore as ServerStore
from mcpkit.auth.wellknown import protected_resource_metadata_path
from mcpkit.client import HTTPOptions
from mcpkit.errors import MCPError
from mcpkit.protocol.http import Refusal
from mcpkit.runtime.principal import Principal
from tests.auth.client.test_flow import make_server
from tests.http.servers import serving, unused_port


class JwtBearer:
    """An `Authenticator` (transports/http/guard.py): RFC 9068 JWTs from `issuer`, for
    `resource`, verified against the issuer's JWKS (fetched over HTTP)."""

    def __init__(self, issuer: str, resource: str) -> None:
        self.issuer, self.resource = issuer, resource
        origin = resource.rsplit("/", 1)[0]  # the app serves the metadata of its /mcp endpoint
        self.metadata_url = origin + protected_resource_metadata_path("/mcp")
        self.refused: list[int] = []
        self.auth_paths: list[str] = []  # what the authorization server was asked, in order

    def metadata_paths(self, endpoint_path: str) -> tuple[str, ...]:
        return (protected_resource_metadata_path(endpoint_path),)

    def metadata(self, scope: dict[str, Any]) -> bytes:
        document = {"resource": self.resource, "authorization_servers": [self.issuer]}
        return orjson.dumps({**document, "scopes_supported": ["mcp"]})

    async def authenticate(self, scope: dict[str, Any], headers: dict[bytes, bytes]) -> Any:
        value = headers.get(b"authorization", b"").decode()
        if not value.startswith("Bearer "):
            return self._refuse(401, 'scope="mcp"')
        try:
            claims = await self._verify(value[7:])
        except (jwt.PyJWTError, httpx.HTTPError, KeyError):
            return self._refuse(401, 'error="invalid_token"')
        scopes = frozenset(str(claims.get("scope", "")).split())
        return Principal(str(claims["sub"]), claims.get("client_id"), scopes)

    def insufficient_scope(self, scope: dict[str, Any], needed: frozenset[str]) -> Refusal:
        return self._refuse(403, f'error="insufficient_scope", scope="{" ".join(sorted(needed))}"')

    async def _verify(self, token: str) -> dict[str, Any]:
        async with httpx.AsyncClient() as http:
            keys = jwt.PyJWKSet.from_dict((await http.get(f"{self.issuer}/jwks")).json())
        kid = jwt.get_unverified_header(token)["kid"]
        key = next(k for k in keys.keys if k.key_id == kid)
        return jwt.decode(
            token,
            key.key,
            algorithms=["RS256", "ES256"],
            audience=self.resource,
            issuer=self.issuer,
        )

    def _refuse(self, status: int, params: str) -> Refusal:
        self.refused.append(status)
        challenge = f'Bearer {params}, resource_metadata="{self.metadata_url}"'
        return Refusal(
            status, b'{"error":"unauthorized"}', ((b"www-authenticate", challenge.encode()),)
        )


def write_needs_scope(method: str, params: Any) -> frozenset[str]:
    if method == "tools/call" and isinstance(params, dict) and params.get("name") == "write":
        return frozenset({"write"})
    return frozenset()


@contextlib.asynccontextmanager
async def real(
    http_sse: bool = False, **options: Any
) -> AsyncIterator[tuple[str, AuthorizationServer, JwtBearer]]:
    auth_port, mcp_port = unused_port(), unused_port()
    issuer, path = f"http://127.0.0.1:{auth_port}", "/sse" if http_sse else "/mcp"
    resource = f"http://127.0.0.1:{mcp_port}{path}"
    auth = AuthorizationServer(
        AuthServerOptions(
            issuer=issuer,
            store=ServerStore(),
            dev_approve=True,
            scopes=("mcp", "write"),
            default_scopes=("mcp",),
            resources=(resource,),
            **options,
        )
    )
    bearer = JwtBearer(issuer, resource)
    auth_paths: list[str] = []

    async def counted(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            auth_paths.append(scope["path"])
        await auth(scope, receive, send)

    bearer.auth_paths = auth_paths
    app = make_server().http_app(auth=bearer, required_scopes=write_needs_scope, http_sse=http_sse)
    async with serving(counted, auth_port), serving(app, mcp_port):
        yield resource, auth, bearer


async def tools(url: str, oauth: OAuth, mode: str = "auto") -> tuple[str, Any]:
    async with Client(url, http=HTTPOptions(auth=oauth), mode=mode, timeout=10) as client:
        result = await client.call_tool("add", {"a": 20, "b": 22})
        return client.era, result.structured_content


@pytest.mark.parametrize(("mode", "era"), [("auto", "per-request"), ("handshake", "handshake")])
async def test_both_eras_against_our_authorization_server(mode: str, era: str) -> None:
    async with real() as (url, _auth, bearer):
        oauth = OAuth(approval=Headless())
        assert await tools(url, oauth, mode) == (era, {"result": 42})
        tokens = oauth.tokens(url)
        assert tokens is not None and tokens.refresh_token is not None
        assert jwt.decode(tokens.access_token, options={"verify_signature": False})["aud"] == url
        assert bearer.refused == [401]


async def test_http_sse_transport_against_our_authorization_server() -> None:
    async with real(http_sse=True) as (url, _auth, bearer):
        assert await tools(url, OAuth(approval=Headless()), "handshake") == (
            "handshake",
            {"result": 42},
        )
        assert bearer.refused == [401]


async def test_rotation_then_a_revoked_grant_means_one_new_login() -> None:
    store = MemoryTokenStore()
    async with real(access_token_ttl=30) as (url, _auth, bearer):  # always "about to expire"
        await tools(url, OAuth(approval=Headless(), store=store))
        first = OAuth(store=store).tokens(url)
        await tools(url, OAuth(approval=Headless(), store=store))  # refreshed before use
        second = OAuth(store=store).tokens(url)
        assert first is not None and second is not None
        assert second.refresh_token != first.refresh_token  # rotated
        client_id = (store.load(url) or {})["clients"][first.issuer]["client_id"]
        async with httpx.AsyncClient() as http:  # reusing the old refresh token revokes the grant
            reused = await http.post(
                f"{first.issuer}/token",
                data={
                    "grant_type": "refresh_token",
                    "refresh_token": first.refresh_token or "",
                    "client_id": client_id,
                },
            )
        assert reused.json()["error"] == "invalid_grant"
        oauth = OAuth(approval=Headless(), store=store)
        assert await tools(url, oauth) == ("per-request", {"result": 42})  # refresh refused: log in
        assert bearer.auth_paths.count("/authorize") == 2


async def test_step_up_against_our_authorization_server() -> None:
    async with real() as (url, _auth, bearer):
        oauth = OAuth(approval=Headless())
        async with Client(url, http=HTTPOptions(auth=oauth), timeout=10) as client:
            result = await client.call_tool("write", {"text": "up"})
        assert result.content[0].text == "UP"  # type: ignore[union-attr]
        tokens = oauth.tokens(url)
        assert tokens is not None and set(str(tokens.scope).split()) >= {"mcp", "write"}
        assert bearer.refused == [401, 403]


async def test_without_login_the_real_server_refuses_clearly() -> None:
    async with real() as (url, _auth, _bearer):
        with pytest.raises(MCPError, match="logging in is turned off"):
            await tools(url, OAuth(approval=Headless(), login=False))
