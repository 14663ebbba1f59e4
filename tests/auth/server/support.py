"""Real peers for the authorization-server tests: the server on uvicorn at 127.0.0.1 (a free
port, known before the app is built, since the issuer names it), and the client's side of
the flows, spoken with httpx."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx

from mcpkit.auth import pkce
from mcpkit.auth.server import (
    AuthorizationServer,
    AuthServerOptions,
    ClientConfig,
    MemoryAuthStore,
    PasswordUsers,
)
from tests.http.servers import serving, unused_port

CALLBACK = "http://127.0.0.1:5173/callback"
MACHINE_SECRET = "machine-secret-0123456789abcdef0123456789"
RS_SECRET = "resource-server-secret-0123456789abcdef"
USERS = PasswordUsers.from_passwords({"alice": "wonderland"})


def clients() -> tuple[ClientConfig, ...]:
    return (
        ClientConfig("app", redirect_uris=("http://127.0.0.1/callback",), client_name="The App"),
        ClientConfig(
            "machine",
            client_secret=MACHINE_SECRET,
            grant_types=("client_credentials",),
            scope="mcp files:read",
        ),
        ClientConfig("rs", client_secret=RS_SECRET, grant_types=(), introspect=True),
    )


def options(port: int, **overrides: Any) -> AuthServerOptions:
    base = AuthServerOptions(
        issuer=f"http://127.0.0.1:{port}",
        store=MemoryAuthStore(),
        scopes=("mcp", "files:read", "files:write"),
        default_scopes=("mcp",),
        clients=clients(),
        authenticate=USERS,
        dev_approve=True,
    )
    return dataclasses.replace(base, **overrides)


@dataclass
class Running:
    """A served authorization server and an httpx client to talk to it."""

    url: str
    server: AuthorizationServer
    http: httpx.AsyncClient


@contextlib.asynccontextmanager
async def running(**overrides: Any) -> AsyncIterator[Running]:
    port = unused_port()
    server = AuthorizationServer(options(port, **overrides))
    async with serving(server, port) as url, httpx.AsyncClient(base_url=url) as http:
        yield Running(url, server, http)


@dataclass
class Flow:
    """One authorization request, as a client makes it."""

    client_id: str = "app"
    redirect_uri: str = CALLBACK
    scope: str | None = "mcp"
    resource: str | None = "http://127.0.0.1:8000/mcp"
    state: str = "xyz-state"
    verifier: str = dataclasses.field(default_factory=pkce.new_verifier)

    def query(self, **changes: str | None) -> dict[str, str]:
        params: dict[str, str | None] = {
            "response_type": "code",
            "client_id": self.client_id,
            "redirect_uri": self.redirect_uri,
            "scope": self.scope,
            "state": self.state,
            "resource": self.resource,
            "code_challenge": pkce.s256_challenge(self.verifier),
            "code_challenge_method": "S256",
        }
        params.update(changes)
        return {k: v for k, v in params.items() if v is not None}

    def token_form(self, code: str, **changes: str | None) -> dict[str, str]:
        form: dict[str, str | None] = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": self.redirect_uri,
            "code_verifier": self.verifier,
            "client_id": self.client_id,
            "resource": self.resource,
        }
        form.update(changes)
        return {k: v for k, v in form.items() if v is not None}


def redirected_to(response: httpx.Response) -> tuple[str, dict[str, str]]:
    """Where a redirect goes (without its query) and its query parameters (each once)."""
    assert response.status_code in (302, 303), (response.status_code, response.text)
    location = urlsplit(response.headers["location"])
    params = parse_qs(location.query)
    assert all(len(v) == 1 for v in params.values()), params
    base = f"{location.scheme}://{location.netloc}{location.path}"
    return base, {k: v[0] for k, v in params.items()}


async def code_for(running: Running, flow: Flow, **changes: str | None) -> str:
    """An authorization code for `flow`, approved at once (dev_approve)."""
    response = await running.http.get("/authorize", params=flow.query(**changes))
    _, params = redirected_to(response)
    assert "code" in params, params
    return params["code"]


async def tokens_for(running: Running, flow: Flow) -> dict[str, Any]:
    code = await code_for(running, flow)
    response = await running.http.post("/token", data=flow.token_form(code))
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


async def register(run: Running, **metadata: Any) -> dict[str, Any]:
    """A client registered dynamically: public, with refresh tokens, unless `metadata` says."""
    document = {
        "redirect_uris": [CALLBACK],
        "token_endpoint_auth_method": "none",
        "grant_types": ["authorization_code", "refresh_token"],
        **metadata,
    }
    response = await run.http.post("/register", json=document)
    assert response.status_code == 201, response.text
    answer: dict[str, Any] = response.json()
    return answer


async def refresh(run: Running, token: str, client_id: str = "app", **extra: str) -> httpx.Response:
    form = {"grant_type": "refresh_token", "refresh_token": token, "client_id": client_id}
    return await run.http.post("/token", data={**form, **extra})


async def introspect(running: Running, token: str) -> dict[str, Any]:
    response = await running.http.post("/introspect", data={"token": token}, auth=("rs", RS_SECRET))
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer
