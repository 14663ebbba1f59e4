"""Two workers in this process sharing one Redis: a session belongs to whoever opened it, on
every worker (a worker that never saw the session rebuilds it only for its owner; anyone else
presenting its id finds nothing), and a worker's copies of sessions are a cache it drops."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from mcpkit.protocol.http import Refusal
from mcpkit.runtime.principal import Principal
from mcpkit.transports.http.redis_state import RedisState
from tests.clock import FakeClock
from tests.http.servers import serving
from tests.scaleout.app import server
from tests.scaleout.test_resumption import ACCEPT, VERSION, open_session


class HeaderAuth:
    """The caller is who the X-User header names (a test's stand-in for verified tokens)."""

    def metadata_paths(self, endpoint_path: str) -> tuple[str, ...]:
        return ()

    def metadata(self, scope: dict[str, Any]) -> bytes:
        return b"{}"

    async def authenticate(
        self, scope: dict[str, Any], headers: dict[bytes, bytes]
    ) -> Principal | Refusal:
        user = headers.get(b"x-user")
        return Principal(user.decode()) if user else Refusal(401, b"")

    def insufficient_scope(self, scope: dict[str, Any], needed: frozenset[str]) -> Refusal:
        return Refusal(403, b"")


async def test_another_principal_cannot_use_a_session_on_a_worker_that_never_saw_it(
    redis_url: str,
) -> None:
    apps = [
        server.http_app(state=RedisState(redis_url, prefix="owner:"), auth=HeaderAuth())
        for _ in "ab"
    ]
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "t"}},
    }
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    async with serving(apps[0]) as a, serving(apps[1]) as b, httpx.AsyncClient() as http:
        opened = await http.post(
            a + "/mcp", json=init, headers={"accept": ACCEPT, "x-user": "alice"}
        )
        session = {
            "accept": ACCEPT,
            "mcp-session-id": opened.headers["mcp-session-id"],
            "mcp-protocol-version": VERSION,
        }
        bob = await http.post(b + "/mcp", json=ping, headers=dict(session, **{"x-user": "bob"}))
        assert bob.status_code == 404 and len(apps[1].sessions) == 0
        alice = await http.post(b + "/mcp", json=ping, headers=dict(session, **{"x-user": "alice"}))
        assert alice.status_code == 200 and len(apps[1].sessions) == 1
        again = await http.post(b + "/mcp", json=ping, headers=dict(session, **{"x-user": "bob"}))
        assert again.status_code == 404  # the copy b now holds is alice's too


async def test_a_worker_drops_copies_unused_for_a_while_and_rebuilds_them(redis_url: str) -> None:
    """A worker's sessions are a cache: a copy unused for `cache_idle` is dropped (the record
    stays, so idle sessions cost workers nothing) and rebuilt by the next request."""
    clock = FakeClock()
    state = RedisState(redis_url, prefix="cache:", cache_idle=60, clock=clock)
    app = server.http_app(state=state)
    sessions: Any = app.sessions
    async with serving(app) as base, httpx.AsyncClient() as http:
        url = base + "/mcp"
        headers = await open_session(http, url)
        clock.advance(30)
        await sessions.sweep_once()
        assert len(app.sessions) == 1  # used 30 s ago: kept
        clock.advance(31)
        await sessions.sweep_once()
        assert len(app.sessions) == 0  # unused for 61 s: dropped here, kept in Redis
        ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
        assert (await http.post(url, json=ping, headers=headers)).status_code == 200
        assert len(app.sessions) == 1


async def test_a_copy_catches_up_with_a_change_made_elsewhere_without_ending_its_call(
    redis_url: str,
) -> None:
    """Another worker changed the session (the log level) while this worker's copy answers a
    long call: the same copy keeps answering the call and serves the next request at the new
    level (told through the bus, or else from the record)."""
    a_app, b_app = (server.http_app(state=RedisState(redis_url, prefix="stale:")) for _ in "ab")
    async with serving(a_app) as a, serving(b_app) as b, httpx.AsyncClient(timeout=10) as http:
        headers = await open_session(http, a + "/mcp")
        steps = {"name": "steps", "arguments": {"count": 3, "pause": 0.2}}
        call = {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": steps}
        a_sessions: Any = a_app.sessions
        [old] = [copy.session for copy in a_sessions.copies.values()]
        long_call = asyncio.ensure_future(http.post(a + "/mcp", json=call, headers=headers))
        for _ in range(500):  # until the long call is open on a's copy
            if old.transport.pending:
                break
            await asyncio.sleep(0.01)
        assert old.transport.pending
        for request_id, (url, level) in enumerate(((a, "debug"), (b, "warning")), 6):
            set_level = {"jsonrpc": "2.0", "id": request_id, "method": "logging/setLevel",
                         "params": {"level": level}}  # fmt: skip
            assert (await http.post(url + "/mcp", json=set_level, headers=headers)).is_success
        chatter = {"jsonrpc": "2.0", "id": 8, "method": "tools/call",
                   "params": {"name": "chatter", "arguments": {}}}  # fmt: skip
        logged = await http.post(a + "/mcp", json=chatter, headers=headers)
        assert "a warning line" in logged.text and "a debug line" not in logged.text
        [same] = [copy.session for copy in a_sessions.copies.values()]
        assert same is old and not long_call.done()
        answer = await long_call
        assert answer.status_code == 200 and "3 steps on" in answer.text


def test_a_redis_state_serves_one_app(redis_url: str) -> None:
    """Its sessions register their channels on the state's bus: a second app is refused
    plainly, instead of taking the first one's messages."""
    state = RedisState(redis_url, prefix="one-app:")
    server.http_app(state=state)
    with pytest.raises(ValueError, match="serves one app"):
        server.http_app(state=state)
