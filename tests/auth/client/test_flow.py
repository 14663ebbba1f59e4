"""The OAuth client end to end: a real mcpkit server behind bearer tokens, a real (test)
authorization server, uvicorn on 127.0.0.1, both eras and both HTTP transports."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from mcpkit import Client, Server
from mcpkit.auth.client import (
    Browser,
    Callback,
    ClientCredentials,
    Headless,
    MemoryTokenStore,
    OAuth,
    OAuthError,
)
from mcpkit.client import HTTPOptions
from mcpkit.errors import MCPError
from tests.auth.client.fixtures import AuthServer, Protected
from tests.http.servers import serving


def make_server() -> Server:
    server = Server("protected")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @server.tool()
    def write(text: str) -> str:
        """Needs the `write` scope."""
        return text.upper()

    return server


@contextlib.asynccontextmanager
async def deployment(
    auth: AuthServer | None = None, http_sse: bool = False, **protected: Any
) -> AsyncIterator[tuple[str, AuthServer, Protected]]:
    """(MCP URL, authorization server, protected app), all served on 127.0.0.1."""
    auth = auth or AuthServer()
    path = "/sse" if http_sse else "/mcp"
    app = Protected(make_server().http_app(http_sse=http_sse), auth, path=path, **protected)
    async with serving(auth) as auth_base, serving(app) as base:
        auth.base, app.base = auth_base, base
        yield base + path, auth, app


def headless(**options: Any) -> OAuth:
    return OAuth(approval=Headless(), **options)


async def add(url: str, oauth: OAuth, mode: str = "auto", **options: Any) -> Any:
    async with Client(url, http=HTTPOptions(auth=oauth), mode=mode, timeout=10, **options) as c:
        result = await c.call_tool("add", {"a": 2, "b": 3})
        return c.era, result.structured_content


@pytest.mark.parametrize(
    ("mode", "era", "first"),
    [
        ("auto", "per-request", "server/discover"),  # the era probe is the request refused
        ("handshake", "handshake", "initialize"),
        ("2026-07-28", "per-request", "server/discover"),
    ],
)
async def test_logs_in_and_calls_in_each_era(mode: str, era: str, first: str) -> None:
    async with deployment() as (url, auth, app):
        oauth = headless()
        assert await add(url, oauth, mode) == (era, {"result": 5})
        assert auth.count("register") == auth.count("authorize") == 1
        (_, request), *_ = [e for e in auth.log if e[0] == "authorize"]
        assert request["resource"] == url and request["code_challenge_method"] == "S256"
        assert request["scope"] == "mcp"
        assert app.statuses[0] == 401 and app.statuses[-1] == 200
        assert app.methods[:2] == [first, first]  # refused, then resent with the token
        assert oauth.tokens(url) is not None


async def test_legacy_http_sse_transport_carries_the_token() -> None:
    async with deployment(http_sse=True) as (url, auth, app):
        assert await add(url, headless(), "handshake") == ("handshake", {"result": 5})
        assert auth.count("authorize") == 1
        assert app.statuses.count(200) >= 3  # the SSE GET and the POSTs to /messages/


async def test_stored_tokens_are_reused_and_refreshed_before_expiry() -> None:
    store = MemoryTokenStore()
    async with deployment(AuthServer(expires_in=30)) as (url, auth, _):
        await add(url, headless(store=store))
        await add(url, headless(store=store))  # a new process, the same store
        refreshes = [
            e for e in auth.log if e[0] == "token" and e[1]["grant_type"] == "refresh_token"
        ]
        assert auth.count("authorize") == 1 and len(refreshes) >= 1
        assert refreshes[0][1]["resource"] == url


async def test_a_401_with_a_stale_token_refreshes_it() -> None:
    async with deployment() as (url, auth, _):
        oauth = headless()
        await add(url, oauth)
        first = oauth.tokens(url)
        auth.expire_access_tokens()
        await add(url, oauth)
        second = oauth.tokens(url)
        assert first is not None and second is not None
        assert auth.count("authorize") == 1
        assert second.access_token != first.access_token
        assert second.refresh_token != first.refresh_token  # rotated


async def test_a_revoked_refresh_token_leads_to_one_new_login() -> None:
    async with deployment() as (url, auth, _):
        oauth = headless()
        await add(url, oauth)
        auth.expire_access_tokens()
        auth.revoke_refresh_tokens()
        assert await add(url, oauth) == ("per-request", {"result": 5})
        assert auth.count("authorize") == 2
        assert auth.count("token") == 3  # code, the refused refresh, code


async def test_without_login_a_dead_token_fails_clearly() -> None:
    async with deployment() as (url, auth, _):
        store = MemoryTokenStore()
        await add(url, headless(store=store))
        auth.expire_access_tokens()
        auth.revoke_refresh_tokens()
        with pytest.raises(MCPError, match="logging in is turned off"):
            await add(url, headless(store=store, login=False))
        assert auth.count("authorize") == 1


async def test_step_up_adds_the_challenged_scope_and_retries_once() -> None:
    async with deployment(method_scopes={"tools/call:write": "write"}) as (url, auth, app):
        oauth = headless()
        async with Client(url, http=HTTPOptions(auth=oauth), timeout=10) as client:
            result = await client.call_tool("write", {"text": "hi"})
        assert result.content[0].text == "HI"
        scopes = [e[1].get("scope") for e in auth.log if e[0] == "authorize"]
        assert scopes == ["mcp", "mcp write"]  # the union, not just the challenged scope
        assert app.statuses.count(403) == 1


async def test_step_up_is_bounded_when_the_scope_is_never_granted() -> None:
    guarded = {"method_scopes": {"tools/call:write": "admin"}}
    async with deployment(AuthServer(withheld={"admin"}), **guarded) as (url, auth, app):
        async with Client(url, http=HTTPOptions(auth=headless()), timeout=10) as client:
            for _ in range(3):
                with pytest.raises(MCPError):
                    await client.call_tool("write", {"text": "hi"})
        assert auth.count("authorize") == 2  # the login and one step-up, for all three calls
        assert app.statuses.count(403) == 4


async def test_concurrent_401s_share_one_recovery() -> None:
    async with deployment() as (url, auth, _):
        oauth = headless()
        async with Client(url, http=HTTPOptions(auth=oauth), timeout=10) as client:
            auth.expire_access_tokens()
            auth.revoke_refresh_tokens()
            calls = [client.call_tool("add", {"a": i, "b": 1}) for i in range(6)]
            results = await asyncio.gather(*calls)
        assert [r.structured_content["result"] for r in results] == [1, 2, 3, 4, 5, 6]
        assert auth.count("authorize") == 2


async def test_authorization_server_migration_registers_at_the_new_one() -> None:
    second = AuthServer()
    async with deployment() as (url, first, app), serving(second) as second_base:
        second.base = second_base
        oauth = headless()
        await add(url, oauth)
        app.auth = second  # the resource now names another authorization server
        assert await add(url, oauth) == ("per-request", {"result": 5})
        old_client = next(iter(first.clients))
        assert second.count("register") == 1 and old_client not in second.clients
        assert all(e[1].get("client_id") != old_client for e in second.log)
        tokens = oauth.tokens(url)
        assert tokens is not None and tokens.issuer == second_base


async def test_client_credentials_for_a_machine_client() -> None:
    async with deployment() as (url, auth, _):
        oauth = OAuth(client=ClientCredentials("robot", "s3cret"), grant="client_credentials")
        assert await add(url, oauth) == ("per-request", {"result": 5})
        ((_, token),) = [e for e in auth.log if e[0] == "token"]
        assert token["grant_type"] == "client_credentials" and token["basic"] is True
        assert token["scope"] == "mcp" and token["resource"] == url
        assert auth.count("authorize") == 0


async def test_browser_approval_through_the_loopback_listener() -> None:
    """The "browser" is a real HTTP client in another thread following the redirects."""
    opened: list[str] = []

    def browse(url: str) -> None:
        opened.append(url)
        threading.Thread(target=httpx.get, args=(url,), kwargs={"follow_redirects": True}).start()

    async with deployment() as (url, auth, _):
        assert await add(url, OAuth(approval=Browser(open=browse, timeout=10))) == (
            "per-request",
            {"result": 5},
        )
        ((_, request),) = [e for e in auth.log if e[0] == "authorize"]
        assert request["redirect_uri"].startswith("http://127.0.0.1:")
        assert len(opened) == 1


async def test_a_browser_that_runs_in_the_foreground_does_not_stall_the_listener() -> None:
    """$BROWSER may be a text-mode browser that `webbrowser.open` waits for: it must not block
    the loop that serves the loopback listener it is about to call."""

    def browse_and_wait(url: str) -> None:
        httpx.get(url, follow_redirects=True, timeout=5)  # returns once the callback answered

    async with deployment() as (url, _, _app):
        oauth = OAuth(approval=Browser(open=browse_and_wait, timeout=10))
        assert await add(url, oauth) == ("per-request", {"result": 5})


async def test_callback_approval_gets_the_url_and_returns_where_it_landed() -> None:
    async def show(authorization_url: str) -> str:
        async with httpx.AsyncClient() as http:
            answer = await http.get(authorization_url)
            return answer.headers["location"]

    async with deployment() as (url, _, _app):
        oauth = OAuth(approval=Callback(show, "http://127.0.0.1:9/done"))
        assert await add(url, oauth) == ("per-request", {"result": 5})


async def test_prepare_logs_in_before_the_first_request_and_then_reuses() -> None:
    async with deployment() as (url, auth, app):
        oauth = headless()
        tokens = await oauth.prepare(url)
        assert tokens is not None and auth.count("authorize") == 1
        assert await oauth.prepare(url) == tokens  # stored and fresh: nothing to do
        await add(url, oauth)
        assert app.statuses.count(401) == 1  # only prepare's own unauthenticated ping


async def test_a_registration_made_headless_is_replaced_for_the_browser() -> None:
    store = MemoryTokenStore()

    def browse(url: str) -> None:
        threading.Thread(target=httpx.get, args=(url,), kwargs={"follow_redirects": True}).start()

    async with deployment() as (url, auth, _):
        await headless(store=store).login(url)
        await OAuth(store=store, approval=Browser(open=browse, timeout=10)).login(url)
        first, second = [e[1]["redirect_uris"] for e in auth.log if e[0] == "register"]
        assert first == ["http://127.0.0.1/callback"]
        assert second[0].startswith("http://127.0.0.1:")


async def test_login_and_logout() -> None:
    async with deployment() as (url, auth, _):
        oauth = headless()
        tokens = await oauth.login(url)
        assert tokens.issuer == auth.base and tokens.resource == url
        assert await add(url, oauth) == ("per-request", {"result": 5})
        assert auth.count("authorize") == 1
        oauth.logout(url)
        assert oauth.tokens(url) is None


async def test_a_server_that_asks_nothing_sees_no_token() -> None:
    app = make_server().http_app()
    async with serving(app) as base:
        oauth = headless()
        assert await oauth.prepare(base + "/mcp") is None
        assert await add(base + "/mcp", oauth) == ("per-request", {"result": 5})
        assert oauth.tokens(base + "/mcp") is None


def test_oauth_error_is_an_mcp_error_and_no_http_error() -> None:
    # One exception tree (issue 23): ours only, no httpx class to catch it by.
    error = OAuthError("token", "https://as/token", "HTTP 400", error="invalid_grant")
    assert isinstance(error, MCPError) and not isinstance(error, httpx.HTTPError)
    assert str(error) == "OAuth token failed at https://as/token: HTTP 400 (error 'invalid_grant')"
