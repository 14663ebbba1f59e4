"""examples/oauth_server.py as a real process: the official SDK's client with its OAuth
provider (mcp 2.3.0, `OAuthClientProvider`) completes the whole flow against it -- 401,
protected resource metadata, authorization server discovery, dynamic registration, the
authorization code with PKCE and the resource indicator, the token -- and then calls tools,
in both protocol eras; a tool that needs a scope the token lacks is refused (403)."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import httpx2
import pytest
from mcp import Client as OfficialClient
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)

from tests.http.servers import unused_port

ROOT = Path(__file__).resolve().parents[2]
CALLBACK = "http://127.0.0.1:5173/callback"


@pytest.fixture(scope="module")
def example() -> Iterator[str]:
    port = unused_port()
    command = [
        sys.executable,
        str(ROOT / "examples" / "oauth_server.py"),
        "--port",
        str(port),
        "--dev-approve",
        "--memory",
    ]
    process = subprocess.Popen(command, cwd=ROOT, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            with contextlib.suppress(httpx.TransportError):
                httpx.get(f"{base}/.well-known/oauth-authorization-server", timeout=1)
                break
            time.sleep(0.05)
        yield base
    finally:
        process.terminate()
        process.wait(10)


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


def provider(base: str, storage: Storage, landed: list[dict[str, str]]) -> OAuthClientProvider:
    async def open_browser(url: str) -> None:
        # The user's browser: our authorization server approves at once (--dev-approve).
        async with httpx.AsyncClient() as browser:
            response = await browser.get(url)
        assert response.status_code == 302, response.text
        location = urlsplit(response.headers["location"])
        assert f"{location.scheme}://{location.netloc}{location.path}" == CALLBACK
        landed.append({k: v[0] for k, v in parse_qs(location.query).items()})

    async def callback() -> AuthorizationCodeResult:
        # Each authorization hands back its own code (the SDK may run two at once).
        answer = landed[-1]
        return AuthorizationCodeResult(
            code=answer["code"], state=answer.get("state"), iss=answer.get("iss")
        )

    return OAuthClientProvider(
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


def text_of(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])  # the official client's modes
async def test_the_official_oauth_client_logs_in_and_calls_tools(example: str, mode: str) -> None:
    storage = Storage()
    landed: list[dict[str, str]] = []
    auth = provider(example, storage, landed)
    async with (
        httpx2.AsyncClient(auth=auth, timeout=30) as http,
        OfficialClient(
            streamable_http_client(f"{example}/mcp", http_client=http), mode=mode
        ) as client,
    ):
        whoami = await client.call_tool("whoami", {})
        assert storage.client is not None
        assert text_of(whoami) == f"dev-user via {storage.client.client_id}: mcp"
    assert [answer["iss"] for answer in landed] == [example]  # RFC 9207, checked by the SDK
    tokens = storage.tokens
    assert tokens is not None and tokens.scope == "mcp" and tokens.refresh_token
    # The token is for this server and grants `mcp`: a tool that needs `admin` is 403 with
    # the challenge a client steps up with (the union of what it has and what it lacks).
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "audit_log", "arguments": {}},
    }
    headers = {
        "authorization": f"Bearer {tokens.access_token}",
        "accept": "application/json, text/event-stream",
    }
    async with httpx.AsyncClient() as raw:
        opened = await raw.post(
            f"{example}/mcp",
            headers=headers,
            json={
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "1"},
                },
            },
        )
        headers["mcp-session-id"] = opened.headers["mcp-session-id"]
        refused = await raw.post(f"{example}/mcp", headers=headers, json=call)
    assert refused.status_code == 403
    challenge = refused.headers["www-authenticate"]
    assert 'error="insufficient_scope"' in challenge and 'scope="admin mcp"' in challenge
