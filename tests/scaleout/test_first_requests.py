"""A worker's first requests for a session another worker opened, arriving together (a
client's GET stream and its first POST): one copy of the session, which holds the GET
stream, so that messages for that stream reach it and a drain ends it. Before, each request
rebuilt a copy and the last one replaced the others: the GET stream stayed on a copy nobody
held, and a SIGTERMed worker waited its whole graceful-shutdown bound for it."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from mcpkit.transports.http.redis_state import RedisState
from tests.http.servers import serving
from tests.scaleout.app import server
from tests.scaleout.test_resumption import open_session


async def test_requests_arriving_together_share_one_copy(redis_url: str) -> None:
    a_app, b_app = (server.http_app(state=RedisState(redis_url, prefix="first:")) for _ in "ab")
    async with serving(a_app) as a, serving(b_app) as b, httpx.AsyncClient(timeout=10) as http:
        headers = await open_session(http, a + "/mcp")
        session_id = headers["mcp-session-id"]
        b_sessions: Any = b_app.sessions
        serve = b_app.handshake._serve  # what b's handshake transport rebuilds a session with
        # both read the record before either has made a copy (each waits on Redis)
        first, second = await asyncio.gather(
            b_sessions.get(session_id, None, serve), b_sessions.get(session_id, None, serve)
        )
        assert first is second
        assert [copy.session for copy in b_sessions.copies.values()] == [first]
        # and over HTTP: the GET stream opened on b is the held copy's, ended by a drain
        get = {**headers, "accept": "text/event-stream"}
        async with http.stream("GET", b + "/mcp", headers=get) as stream:
            assert stream.status_code == 200
            assert first.transport.standalone.attached
            await b_app.drain()
            async for _ in stream.aiter_bytes():  # ends: the drain released it
                pass
