"""Attacks on the OAuth client, each against real local servers: the client must refuse, and
the authorization code must never reach a token endpoint it should not."""

from __future__ import annotations

import asyncio
import logging
import os
import stat
from pathlib import Path

import httpx
import pytest

from mcpkit import Client
from mcpkit.auth.client import Browser, FileStore, Headless, OAuth, OAuthError
from mcpkit.auth.client.loopback import LoopbackListener
from mcpkit.client import HTTPOptions
from mcpkit.errors import MCPError
from tests.auth.client.fixtures import AuthServer, Grant
from tests.auth.client.test_flow import deployment


async def refused(auth: AuthServer, step: str, match: str, **protected: object) -> OAuthError:
    async with deployment(auth, **protected) as (url, _, _app):
        with pytest.raises(OAuthError, match=match) as caught:
            await OAuth(approval=Headless()).login(url)
    assert caught.value.step == step
    return caught.value


@pytest.mark.parametrize(
    ("iss_mode", "advertise", "match"),
    [
        ("wrong", True, "mix-up"),  # another server's response
        ("wrong", False, "mix-up"),  # compared even when the server does not advertise iss
        ("missing", True, "no `iss`"),  # advertised but absent
        ("slash", True, "mix-up"),  # no normalization: a trailing slash is another issuer
    ],
)
async def test_mix_up_is_refused_before_the_code_is_spent(
    iss_mode: str, advertise: bool, match: str
) -> None:
    auth = AuthServer(iss_mode=iss_mode, advertise_iss=advertise)
    await refused(auth, "authorization", match)
    assert auth.count("authorize") == 1 and auth.count("token") == 0


async def test_a_response_without_iss_is_fine_when_not_advertised() -> None:
    auth = AuthServer(iss_mode="missing", advertise_iss=False)
    async with deployment(auth) as (url, _, _app):
        tokens = await OAuth(approval=Headless()).login(url)
    assert tokens.issuer == auth.base and auth.count("token") == 1


async def test_state_mismatch_is_refused() -> None:
    auth = AuthServer(state_mode="other")
    await refused(auth, "authorization", "`state`")
    assert auth.count("token") == 0


async def test_an_injected_code_from_another_flow_is_useless() -> None:
    """The redirect carries a code issued to another flow (right state, wrong PKCE): the
    client spends it with its own verifier, which cannot match, and gets no token."""
    auth = AuthServer(inject_code="stolen")
    auth.grants["stolen"] = Grant("victim", "http://127.0.0.1/callback", "victim-challenge", "", "")
    error = await refused(auth, "token", "HTTP 400")
    assert error.error == "invalid_grant"
    assert not auth.tokens  # nothing was issued


async def test_metadata_naming_another_issuer_is_not_used() -> None:
    auth = AuthServer(metadata_issuer="https://attacker.example")
    await refused(auth, "discovery", "issuer https://attacker.example is not")
    assert auth.count("register") == auth.count("authorize") == auth.count("token") == 0


async def test_resource_metadata_for_another_resource_is_refused() -> None:
    auth = AuthServer()
    await refused(
        auth, "discovery", "for https://evil.example/mcp", resource="https://evil.example/mcp"
    )
    assert auth.count("authorize") == 0


async def test_an_authorization_server_without_pkce_s256_is_refused() -> None:
    auth = AuthServer(pkce_methods=["plain"])
    await refused(auth, "discovery", "PKCE S256")
    assert auth.count("authorize") == 0


async def test_the_refusal_reaches_the_client_user() -> None:
    auth = AuthServer(iss_mode="wrong")
    async with deployment(auth) as (url, _, _app):
        with pytest.raises(MCPError, match=r"OAuth authorization failed at .*/authorize: .*mix-up"):
            async with Client(url, http=HTTPOptions(auth=OAuth(approval=Headless())), timeout=10):
                pass
    # One attempt: the era probe's fallback to initialize met the same error, not a new login.
    assert auth.count("authorize") == 1 and auth.count("token") == 0


async def test_no_secret_in_errors_or_logs(caplog: pytest.LogCaptureFixture) -> None:
    """mcpkit's own logs (all levels) and httpx's request log. (httpcore's DEBUG trace
    prints every header, Authorization included, for any httpx user: not ours to change.)"""
    auth = AuthServer(inject_code="stolen")
    auth.grants["stolen"] = Grant("victim", "http://127.0.0.1/callback", "x", "", "")
    caplog.set_level(logging.INFO)
    caplog.set_level(logging.DEBUG, logger="mcpkit")
    error = await refused(auth, "token", "HTTP 400")
    ((_, token_request),) = [e for e in auth.log if e[0] == "token"]
    secrets = [token_request["code"], token_request["code_verifier"]]
    async with deployment() as (url, good, _app):
        oauth = OAuth(approval=Headless())
        tokens = await oauth.login(url)
        async with Client(url, http=HTTPOptions(auth=oauth), timeout=10) as client:
            await client.list_tools()
    ((_, good_request),) = [e for e in good.log if e[0] == "token"]
    assert tokens.refresh_token is not None
    secrets += [
        tokens.access_token,
        tokens.refresh_token,
        good_request["code"],
        good_request["code_verifier"],
    ]
    shown = caplog.text + str(error) + repr(error) + repr(tokens)
    leaked = [s for s in secrets if s in shown]
    assert not leaked, [line for line in shown.splitlines() if any(s in line for s in leaked)][:3]


# -- the loopback listener ----------------------------------------------------------------


def test_the_browser_flow_refuses_a_non_loopback_redirect_uri() -> None:
    with pytest.raises(OAuthError, match="only listens on loopback"):
        Browser().redirect_uri(["https://app.example.com/callback"])
    assert Browser().redirect_uri(["https://app.example.com/cb", "http://127.0.0.1:8123/cb"]) == (
        "http://127.0.0.1:8123/cb"
    )
    fresh = Browser().redirect_uri(["http://127.0.0.1/callback"])  # loopback, but no port
    assert fresh.startswith("http://127.0.0.1:") and fresh.endswith("/callback")


async def test_the_browser_flow_will_not_listen_for_a_remote_redirect() -> None:
    opened: list[str] = []
    with pytest.raises(OAuthError, match="not a loopback redirect URI"):
        await Browser(open=opened.append).approve(
            "https://as/authorize", "http://example.com:80/cb"
        )
    assert opened == []  # the browser was never sent anywhere


async def test_the_listener_is_loopback_only_one_shot_and_picky() -> None:
    listener = LoopbackListener("/callback")
    port = await listener.start()
    waiting = asyncio.ensure_future(listener.wait(5))
    base = f"http://127.0.0.1:{port}"
    async with httpx.AsyncClient() as http:
        rebinding = await http.get(
            f"{base}/callback?code=x", headers={"host": f"evil.example:{port}"}
        )
        elsewhere = await http.get(f"{base}/favicon.ico")
        assert (rebinding.status_code, elsewhere.status_code) == (400, 404)
        assert not waiting.done()  # neither ended the wait
        landed = await http.get(f"{base}/callback?code=abc&state=s")
        assert landed.status_code == 200 and "close this window" in landed.text
        assert await waiting == f"{base}/callback?code=abc&state=s"
        with pytest.raises(httpx.ConnectError):  # one-shot: it stopped listening
            await http.get(f"{base}/callback?code=again")


async def test_the_listener_gives_up_after_its_timeout() -> None:
    listener = LoopbackListener()
    await listener.start()
    with pytest.raises(TimeoutError):
        await listener.wait(0.2)


# -- the token store ----------------------------------------------------------------------


@pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")
def test_the_file_store_is_private(tmp_path: Path) -> None:
    store = FileStore(tmp_path / "config" / "mcpkit" / "oauth.json")
    store.save("https://mcp.example/mcp", {"tokens": {"access_token": "secret"}})
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(store.path.parent.stat().st_mode) == 0o700
    assert store.load("https://mcp.example/mcp") == {"tokens": {"access_token": "secret"}}
    store.delete("https://mcp.example/mcp")
    assert store.load("https://mcp.example/mcp") is None
    assert [p.name for p in store.path.parent.iterdir()] == ["oauth.json"]  # no temp files left


@pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")
def test_the_file_store_refuses_a_file_others_can_read(tmp_path: Path) -> None:
    store = FileStore(tmp_path / "oauth.json")
    store.save("k", {"tokens": None})
    store.path.chmod(0o644)
    with pytest.raises(PermissionError, match="chmod 600"):
        store.load("k")


def test_the_file_store_lives_in_the_user_config_dir(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert FileStore().path == tmp_path / "mcpkit" / "oauth.json"
