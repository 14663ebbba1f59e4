"""The stores behind the server (memory and SQLite, one contract), and what persistence buys:
two server instances on one SQLite file, the second started after the first stopped, keep
every registered client, refresh token and signing key."""

from __future__ import annotations

import asyncio
import stat
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from mcpkit.auth.server import AuthorizationServer, AuthStore, MemoryAuthStore, SQLiteStore
from mcpkit.auth.server.store import (
    ClientRecord,
    CodeRecord,
    KeyRecord,
    RefreshRecord,
    digest,
)
from tests.http.servers import unused_port

from .support import (
    CALLBACK,
    Flow,
    Running,
    code_for,
    introspect,
    options,
    redirected_to,
    refresh,
    register,
    running,
    serving,
    tokens_for,
)


@pytest.fixture(params=["memory", "sqlite"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[AuthStore]:
    made: AuthStore = (
        MemoryAuthStore() if request.param == "memory" else SQLiteStore(tmp_path / "s")
    )
    yield made
    await made.close()


def code(code_hash: str, grant: str = "g1", expires_at: float = 2000.0) -> CodeRecord:
    return CodeRecord(code_hash, grant, "app", "alice", ("mcp",), "https://r", CALLBACK, True,
                      "c" * 43, expires_at)  # fmt: skip


def refresh_record(token_hash: str, grant: str = "g1", expires_at: float = 2000.0) -> RefreshRecord:
    return RefreshRecord(token_hash, grant, "app", "alice", ("mcp",), "https://r", expires_at)


async def test_a_code_is_used_once(store: AuthStore) -> None:
    await store.save_code(code("h1"))
    assert await store.use_code("h1") == (code("h1"), True)
    assert await store.use_code("h1") == (code("h1"), False)
    assert await store.use_code("nope") == (None, False)


async def test_a_refresh_token_is_used_once_and_revoked_with_its_grant(store: AuthStore) -> None:
    for token_hash, grant in [("r1", "g1"), ("r2", "g1"), ("r3", "g2")]:
        await store.save_refresh(refresh_record(token_hash, grant))
    assert await store.find_refresh("r1") == (refresh_record("r1"), True)
    assert await store.use_refresh("r1") == (refresh_record("r1"), True)
    assert await store.find_refresh("r1") == (refresh_record("r1"), False)
    assert await store.use_refresh("r1") == (refresh_record("r1"), False)
    await store.revoke("g1", until=5000.0)
    assert await store.use_refresh("r2") == (None, False)
    assert await store.find_refresh("r3") == (refresh_record("r3", "g2"), True)
    assert await store.is_revoked("x", "g1") and not await store.is_revoked("g2")


async def test_clients_keys_and_secrets(store: AuthStore) -> None:
    client = ClientRecord("c1", {"redirect_uris": [CALLBACK]}, "hash", 123)
    await store.save_client(client)
    assert await store.get_client("c1") == client
    assert await store.get_client("c2") is None
    newer = KeyRecord("k2", "RS256", "pem2", 200.0, 900.0)
    older = KeyRecord("k1", "RS256", "pem1", 100.0, 800.0)
    await store.add_key(newer)
    await store.add_key(older)
    assert await store.keys() == [older, newer]
    secret = await store.secret("csrf")
    assert len(secret) == 32 and await store.secret("csrf") == secret
    assert await store.secret("other") != secret


async def test_purge_drops_only_what_expired(store: AuthStore) -> None:
    await store.save_code(code("old", expires_at=100.0))
    await store.save_code(code("new", expires_at=300.0))
    await store.save_refresh(refresh_record("old", expires_at=100.0))
    await store.save_refresh(refresh_record("new", "g2", expires_at=300.0))
    await store.revoke("gone", until=100.0)
    await store.revoke("kept", until=300.0)
    await store.add_key(KeyRecord("k-old", "RS256", "p", 0.0, 100.0))
    await store.add_key(KeyRecord("k-new", "RS256", "p", 50.0, 300.0))
    await store.purge(200.0)
    assert (await store.use_code("old"))[0] is None and (await store.use_code("new"))[1]
    assert (await store.find_refresh("old"))[0] is None
    assert (await store.find_refresh("new"))[0] is not None
    assert not await store.is_revoked("gone") and await store.is_revoked("kept")
    assert [k.kid for k in await store.keys()] == ["k-new"]


async def test_sqlite_shares_state_between_stores_and_keeps_it_private(tmp_path: Path) -> None:
    path = tmp_path / "auth.sqlite3"
    first, second = SQLiteStore(path), SQLiteStore(path)
    try:
        await first.save_code(code("h"))
        taken = await asyncio.gather(first.use_code("h"), second.use_code("h"))
        assert sorted(first_use for _, first_use in taken) == [False, True]
        assert await first.secret("csrf") == await second.secret("csrf")
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    finally:
        await first.close()
        await second.close()


async def test_a_restart_loses_no_client_refresh_token_or_key(tmp_path: Path) -> None:
    port = unused_port()
    database = tmp_path / "auth.sqlite3"

    def server() -> AuthorizationServer:
        return AuthorizationServer(options(port, store=database))

    first = server()
    async with serving(first, port) as url, httpx.AsyncClient(base_url=url) as http:
        client_id = (await register(Running(url, first, http)))["client_id"]
        flow = Flow(client_id=client_id)
        tokens = await tokens_for(Running(url, first, http), flow)
        jwks_before = (await http.get("/jwks")).json()
    await first.close()

    second = server()
    async with serving(second, port) as url, httpx.AsyncClient(base_url=url) as http:
        assert (await http.get("/jwks")).json() == jwks_before
        run = Running(url, second, http)
        assert (await introspect(run, tokens["access_token"]))["active"] is True
        refreshed = await refresh(run, tokens["refresh_token"], client_id)
        assert refreshed.status_code == 200, refreshed.text
        # The client registered before the restart can still authorize.
        _, params = redirected_to(await http.get("/authorize", params=flow.query()))
        assert "code" in params
    await second.close()


async def test_the_server_purges_what_expired_as_requests_come() -> None:
    now = [1_000_000.0]
    async with running(clock=lambda: now[0]) as run:
        code = await code_for(run, Flow())
        assert (await run.server.store.use_code(digest(code)))[0] is not None
        now[0] += 3600
        await run.http.get("/.well-known/oauth-authorization-server")  # any request
        for _ in range(100):
            if (await run.server.store.use_code(digest(code)))[0] is None:
                break
            await asyncio.sleep(0.01)
        assert (await run.server.store.use_code(digest(code)))[0] is None
