"""The official SDK's OAuth client (mcp 2.3.0, `OAuthClientProvider`, an httpx.Auth) completes
its whole flow against our authorization server: it meets a 401 at a protected URL, reads the
protected resource metadata, discovers our metadata (and checks its issuer), registers
dynamically, sends the user to authorize (approved at once here), checks `iss` and `state` on
the way back, exchanges the code with PKCE and the resource indicator, and retries with the
token. The protected resource is a small stand-in that verifies the JWT against our JWKS over
HTTP, as the resource-server side of mcpkit does."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import httpx2
import jwt
from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)

from tests.http.servers import unused_port

from .support import CALLBACK, running, serving


class Storage:
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class ProtectedResource:
    """/mcp answers the subject of a valid token for it, else 401 with resource_metadata."""

    def __init__(self, issuer: str, base: str) -> None:
        self.issuer = issuer
        self.resource = f"{base}/mcp"
        self.metadata_url = f"{base}/.well-known/oauth-protected-resource/mcp"
        self.audiences: list[str] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        status, body, headers = 200, b"", [(b"content-type", b"application/json")]
        if scope["path"] == "/.well-known/oauth-protected-resource/mcp":
            body = json.dumps(
                {
                    "resource": self.resource,
                    "authorization_servers": [self.issuer],
                    "scopes_supported": ["mcp"],
                    "bearer_methods_supported": ["header"],
                }
            ).encode()
        elif scope["path"] == "/mcp":
            subject = await self._subject(dict(scope["headers"]).get(b"authorization", b""))
            if subject is None:
                status = 401
                challenge = f'Bearer resource_metadata="{self.metadata_url}", scope="mcp"'
                headers.append((b"www-authenticate", challenge.encode()))
            body = json.dumps({"sub": subject}).encode()
        else:
            status = 404
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    async def _subject(self, header: bytes) -> str | None:
        if not header.startswith(b"Bearer "):
            return None
        token = header[7:].decode()
        async with httpx.AsyncClient() as http:
            keys = jwt.PyJWKSet.from_dict((await http.get(f"{self.issuer}/jwks")).json())
        kid = jwt.get_unverified_header(token)["kid"]
        key = next(k for k in keys.keys if k.key_id == kid)
        claims = jwt.decode(
            token, key.key, algorithms=["RS256"], audience=self.resource, issuer=self.issuer
        )
        self.audiences.append(claims["aud"])
        return str(claims["sub"])


async def test_the_official_oauth_client_completes_the_flow() -> None:
    async with running() as auth:
        port = unused_port()
        resource = ProtectedResource(auth.url, f"http://127.0.0.1:{port}")
        async with serving(resource, port) as base:
            answer: dict[str, str] = {}

            async def open_browser(url: str) -> None:
                # The user's browser: the authorization is approved at once (dev_approve).
                response = await auth.http.get(url)
                assert response.status_code == 302, response.text
                location = urlsplit(response.headers["location"])
                assert f"{location.scheme}://{location.netloc}{location.path}" == CALLBACK
                answer.update({k: v[0] for k, v in parse_qs(location.query).items()})

            async def callback() -> AuthorizationCodeResult:
                return AuthorizationCodeResult(
                    code=answer["code"], state=answer.get("state"), iss=answer.get("iss")
                )

            storage = Storage()
            provider = OAuthClientProvider(
                server_url=f"{base}/mcp",
                client_metadata=OAuthClientMetadata(
                    client_name="official sdk client",
                    redirect_uris=[CALLBACK],  # type: ignore[list-item]
                    grant_types=["authorization_code", "refresh_token"],
                    token_endpoint_auth_method="none",
                ),
                storage=storage,
                redirect_handler=open_browser,
                callback_handler=callback,
            )
            async with httpx2.AsyncClient(auth=provider, timeout=30) as client:
                response = await client.get(f"{base}/mcp")
            assert response.status_code == 200, response.text
            assert response.json() == {"sub": "dev-user"}
            assert resource.audiences[-1] == resource.resource
            assert answer["iss"] == auth.url
            assert storage.client is not None and storage.client.client_id
            assert storage.tokens is not None and storage.tokens.refresh_token
            assert storage.tokens.scope == "mcp"
