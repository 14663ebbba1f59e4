"""Step-up for clients that register once (issue 22, item 18).

The official SDK's OAuth client (mcp 2.3.0, `OAuthClientProvider`; FastMCP's is built on it)
registers with the scope of the first challenge, and when a tool answers 403
insufficient_scope it authorizes again for more, with the same registration. The scope a
client registered for itself is therefore no ceiling where a person approves: they see the
new scope on the consent page and allow it. What the server does not grant stays refused,
and where nobody approves (client_credentials) the registered scope still bounds the grant.
"""

from __future__ import annotations

import html
import re
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx
import httpx2
import pytest
from mcp import Client as OfficialClient
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata

from mcpkit import Server
from mcpkit.auth.server import AuthorizationServer
from tests.http.servers import serving, unused_port

from .support import CALLBACK, Flow, options, redirected_to, register, running
from .test_official_client import Storage

_HIDDEN = re.compile(r'<input type="hidden" name="([^"]*)" value="([^"]*)">')
_SCOPE_ITEM = re.compile(r"<li><code>([^<]*)</code></li>")


class Person:
    """A person at the consent page, in a browser (cookies kept): reads the scopes asked for,
    signs in and allows."""

    def __init__(self) -> None:
        self.browser = httpx.AsyncClient()
        self.asked: list[list[str]] = []
        self.landed: list[dict[str, str]] = []

    async def open(self, url: str) -> None:
        page = await self.browser.get(url)
        assert page.status_code == 200, page.text
        self.asked.append([html.unescape(s) for s in _SCOPE_ITEM.findall(page.text)])
        form = {html.unescape(k): html.unescape(v) for k, v in _HIDDEN.findall(page.text)}
        form.update(username="alice", password="wonderland", decision="approve")
        action = html.unescape(re.search(r'<form method="post" action="([^"]*)"', page.text)[1])  # type: ignore[index]
        answer = await self.browser.post(urljoin(url, action), data=form)
        assert answer.status_code == 303, answer.text
        location = urlsplit(answer.headers["location"])
        assert f"{location.scheme}://{location.netloc}{location.path}" == CALLBACK
        self.landed.append({k: v[0] for k, v in parse_qs(location.query).items()})

    async def callback(self) -> AuthorizationCodeResult:
        answer = self.landed[-1]
        return AuthorizationCodeResult(
            code=answer["code"], state=answer.get("state"), iss=answer.get("iss")
        )


def files_server() -> Server:
    server = Server("files")

    @server.tool()
    def read() -> str:
        """Anyone with a token."""
        return "read"

    @server.tool(scopes=["files:write"])
    def write() -> str:
        """Needs files:write."""
        return "written"

    return server


def text_of(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])  # the official client's modes
async def test_the_official_client_steps_up_with_the_persons_consent(mode: str) -> None:
    port = unused_port()
    authorization = AuthorizationServer(options(port, dev_approve=False))
    resource = f"http://127.0.0.1:{port}/mcp"
    auth = authorization.bearer_auth(resource, required_scopes=frozenset({"mcp"}))
    app = authorization.mount(files_server().http_app(auth=auth))
    person, storage = Person(), Storage()
    provider = OAuthClientProvider(
        server_url=resource,
        client_metadata=OAuthClientMetadata(
            client_name="official sdk client",
            redirect_uris=[CALLBACK],  # type: ignore[list-item]
            grant_types=["authorization_code", "refresh_token"],
            token_endpoint_auth_method="none",
        ),
        storage=storage,
        redirect_handler=person.open,
        callback_handler=person.callback,
    )
    async with (
        serving(app, port),
        person.browser,
        httpx2.AsyncClient(auth=provider, timeout=30) as http,
        OfficialClient(streamable_http_client(resource, http_client=http), mode=mode) as client,
    ):
        assert text_of(await client.call_tool("read", {})) == "read"
        registered = storage.client
        assert registered is not None and registered.scope == "mcp"
        # 403 insufficient_scope -> the SDK authorizes again for "files:write mcp" with the
        # same registration; the person sees the new scope and allows it.
        assert text_of(await client.call_tool("write", {})) == "written"
    assert storage.client is registered  # no second registration
    assert [sorted(scopes) for scopes in person.asked] == [["mcp"], ["files:write", "mcp"]]
    assert storage.tokens is not None
    assert set((storage.tokens.scope or "").split()) == {"mcp", "files:write"}


async def test_a_self_registered_client_still_gets_only_scopes_the_server_grants() -> None:
    async with running() as run:
        client = await register(run, scope="mcp")
        flow = Flow(client_id=client["client_id"], scope="mcp files:write")
        _, granted = redirected_to(await run.http.get("/authorize", params=flow.query()))
        assert "code" in granted  # more than it registered: the person approves it
        beyond = Flow(client_id=client["client_id"], scope="mcp admin")
        _, refused = redirected_to(await run.http.get("/authorize", params=beyond.query()))
        assert refused["error"] == "invalid_scope"  # no such scope on this server


async def test_where_nobody_consents_the_registered_scope_stays_the_ceiling() -> None:
    grants = ("authorization_code", "refresh_token", "client_credentials")
    async with running(self_registered_grant_types=grants) as run:
        client = await register(
            run,
            scope="mcp",
            grant_types=["client_credentials"],
            token_endpoint_auth_method="client_secret_post",
            redirect_uris=None,
        )
        credentials = {"client_id": client["client_id"], "client_secret": client["client_secret"]}
        form = {"grant_type": "client_credentials", **credentials}
        allowed = await run.http.post("/token", data={**form, "scope": "mcp"})
        assert allowed.status_code == 200, allowed.text
        beyond = await run.http.post("/token", data={**form, "scope": "mcp files:write"})
        assert beyond.status_code == 400 and beyond.json()["error"] == "invalid_scope"
