"""The proxy as an OAuth resource server of its own, and no token passthrough: a downstream
client's Authorization header never reaches the upstream, which gets only the credentials
configured for it (issue 25, Security). Real HTTP on 127.0.0.1 on both sides."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from mcpkit import Client
from mcpkit.auth import BearerAuth, StaticTokenVerifier
from mcpkit.client import HTTPOptions
from mcpkit.gateway import proxy
from mcpkit.runtime.principal import Principal
from mcpkit.types import TextContent
from tests.gateway.upstream_app import server as upstream
from tests.http.server_fixture import HEADERS, initialize_body
from tests.http.servers import Wiretap, serving, unused_port

DOWNSTREAM_TOKEN = "downstream-token-0123456789"
UPSTREAM_TOKEN = "upstream-token-9876543210"


def text(result: Any) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


def bearer_auth(port: int, token: str, subject: str) -> BearerAuth:
    people = {token: Principal(subject, "app", frozenset({"mcp"}))}
    return BearerAuth(
        StaticTokenVerifier(people),
        resource=f"http://127.0.0.1:{port}/mcp",
        authorization_servers=("https://auth.example.com",),
        required_scopes=frozenset({"mcp"}),
    )


@contextlib.asynccontextmanager
async def protected_proxy(target: Any, **options: Any) -> AsyncIterator[str]:
    """The proxy in front of `target`, requiring DOWNSTREAM_TOKEN; yields its /mcp URL."""
    port = unused_port()
    app = proxy(target, **options).http_app(auth=bearer_auth(port, DOWNSTREAM_TOKEN, "user"))
    async with serving(app, port) as base:
        yield base + "/mcp"


def with_token(token: str) -> HTTPOptions:
    return HTTPOptions(headers={"authorization": f"Bearer {token}"})


@pytest.mark.parametrize("mode", ["handshake", "per-request"])
async def test_the_proxy_requires_its_own_tokens(mode: str) -> None:
    async with protected_proxy(upstream) as url:
        async with httpx.AsyncClient() as http:
            refused = await http.post(url, json=initialize_body(), headers=HEADERS)
            wrong = await http.post(
                url, json=initialize_body(), headers={**HEADERS, "authorization": "Bearer no"}
            )
        assert refused.status_code == 401
        assert "resource_metadata" in refused.headers["www-authenticate"]
        assert wrong.status_code == 401
        async with Client(url, mode=mode, http=with_token(DOWNSTREAM_TOKEN), timeout=30) as ok:
            result = await ok.call_tool("add", {"a": 1, "b": 2})
        assert result.structured_content == {"result": 3}


@pytest.mark.parametrize("mode", ["handshake", "per-request"])
async def test_the_downstream_token_never_reaches_the_upstream(mode: str) -> None:
    port = unused_port()
    tapped = Wiretap(upstream.http_app(auth=bearer_auth(port, UPSTREAM_TOKEN, "proxy")))
    async with serving(tapped, port) as upstream_base:
        target = upstream_base + "/mcp"
        async with (
            protected_proxy(target, mode="handshake", http=with_token(UPSTREAM_TOKEN)) as url,
            Client(url, mode=mode, http=with_token(DOWNSTREAM_TOKEN), timeout=30) as client,
        ):
            added = await client.call_tool("add", {"a": 2, "b": 3})
            assert added.structured_content == {"result": 5}
            assert [p.name for p in await client.list_all_prompts()] == ["review"]
    assert tapped.seen, "the upstream was reached"
    for exchange in tapped.seen:
        headers = exchange["headers"]
        assert headers.get("authorization") == f"Bearer {UPSTREAM_TOKEN}"
        assert not any(DOWNSTREAM_TOKEN in value for value in headers.values())
