"""Sessions, security, mounting and the 2024-11-05 HTTP+SSE endpoint of the HTTP server,
over real uvicorn on 127.0.0.1."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from starlette.applications import Starlette
from starlette.routing import Mount

from mcpkit import Server
from mcpkit.protocol.per_request import CLIENT_CAPABILITIES, PROTOCOL_VERSION
from mcpkit.runtime import RequestPeer, Session
from mcpkit.transports.http.event_store import MemoryEventStore
from mcpkit.transports.http.state import LocalState
from tests.clock import FakeClock

from .server_fixture import HEADERS, call, initialize_body, make_server, open_session, read_events
from .servers import serving, unused_port

MODERN_META = {PROTOCOL_VERSION: "2026-07-28", CLIENT_CAPABILITIES: {}}
MODERN_HEADERS = {"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call"}


def live_sessions(ids: set[str]) -> int:
    """Session objects still alive (not yet garbage) among the given HTTP sessions."""
    gc.collect()
    return sum(
        1
        for obj in gc.get_objects()
        if type(obj) is Session and getattr(obj.transport, "session_id", None) in ids
    )


async def test_max_sessions() -> None:
    app = make_server().http_app(max_sessions=2)
    async with serving(app) as base, httpx.AsyncClient(base_url=base) as c:
        first = await open_session(c)
        await open_session(c)
        full = await c.post("/mcp", headers=HEADERS, json=initialize_body())
        assert full.status_code == 503
        await c.delete("/mcp", headers=first)
        await open_session(c)  # room again


async def test_idle_sessions_expire_and_memory_goes_back() -> None:
    clock = FakeClock()
    state = LocalState(MemoryEventStore(), clock=clock)
    app = make_server().http_app(idle_timeout=1.0, state=state)
    async with serving(app) as base, httpx.AsyncClient(base_url=base) as c:
        sessions = [await open_session(c) for _ in range(10)]
        ids = {headers["mcp-session-id"] for headers in sessions}
        assert live_sessions(ids) == 10
        for headers in sessions[:5]:
            assert (await c.delete("/mcp", headers=headers)).status_code == 200
        assert live_sessions(ids) == 5
        clock.advance(0.9)
        assert await app.sessions.end_idle() == 0  # not idle long enough yet
        assert live_sessions(ids) == 5
        clock.advance(0.7)
        await app.sessions.end_idle()  # (the sweeper may have ended them already)
        ping = {"jsonrpc": "2.0", "id": 3, "method": "ping"}
        assert (await c.post("/mcp", headers=sessions[9], json=ping)).status_code == 404
        assert live_sessions(ids) == 0
        assert len(app.sessions) == 0 and len(app.event_store) == 0


async def test_an_open_get_stream_keeps_a_session_alive() -> None:
    clock = FakeClock()
    app = make_server().http_app(idle_timeout=0.2, state=LocalState(clock=clock))
    async with serving(app) as base, httpx.AsyncClient(base_url=base) as c:
        headers = await open_session(c)
        listen = {**headers, "accept": "text/event-stream"}
        async with c.stream("GET", "/mcp", headers=listen) as stream:
            assert stream.status_code == 200
            clock.advance(0.5)
            assert await app.sessions.end_idle() == 0  # idle by the clock, but listening
            ping = {"jsonrpc": "2.0", "id": 3, "method": "ping"}
            assert (await c.post("/mcp", headers=headers, json=ping)).status_code == 200


async def test_origin_and_host_are_checked() -> None:
    async with serving(make_server().http_app()) as base, httpx.AsyncClient(base_url=base) as c:
        evil = {**HEADERS, "origin": "https://evil.example"}
        assert (await c.post("/mcp", headers=evil, json=initialize_body())).status_code == 403
        local = {**HEADERS, "origin": "http://localhost:5173"}
        assert (await c.post("/mcp", headers=local, json=initialize_body())).status_code == 200
        rebound = {**HEADERS, "host": "attacker.example"}
        assert (await c.post("/mcp", headers=rebound, json=initialize_body())).status_code == 421
        proxied = {**HEADERS, "x-forwarded-host": "mcp.example"}
        assert (await c.post("/mcp", headers=proxied, json=initialize_body())).status_code == 200


async def test_a_trusted_proxy_names_the_host() -> None:
    app = make_server().http_app(
        allowed_hosts=["mcp.example"],
        allowed_origins=["https://app.example"],
        trusted_proxies=["127.0.0.1"],
    )
    async with serving(app) as base, httpx.AsyncClient(base_url=base) as c:
        direct = await c.post("/mcp", headers=HEADERS, json=initialize_body())
        assert direct.status_code == 421
        proxied = {**HEADERS, "x-forwarded-host": "mcp.example", "origin": "https://app.example"}
        assert (await c.post("/mcp", headers=proxied, json=initialize_body())).status_code == 200


async def test_mounted_in_starlette_the_lifespan_starts_lazily() -> None:
    entered: list[str] = []

    @contextlib.asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[str]:
        entered.append("in")
        yield "state"
        entered.append("out")

    server = Server("mounted", lifespan=lifespan)

    @server.tool()
    def hello() -> str:
        return "hi"

    outer = Starlette(routes=[Mount("/mcp-app", app=server.http_app())])
    async with serving(outer) as base, httpx.AsyncClient(base_url=base) as c:
        answer = await c.post("/mcp-app/mcp", headers=HEADERS, json=initialize_body())
        assert answer.status_code == 200
        headers = {**HEADERS, "mcp-session-id": answer.headers["mcp-session-id"]}
        await c.post(
            "/mcp-app/mcp",
            headers=headers,
            json={"jsonrpc": "2.0", "method": "notifications/initialized"},
        )
        said = await c.post("/mcp-app/mcp", headers=headers, json=call("hello"))
        assert said.json()["result"]["content"][0]["text"] == "hi"
    assert entered == ["in"]  # entered once, on the first request


async def test_as_root_app_the_asgi_lifespan_runs_the_server_lifespan() -> None:
    entered: list[str] = []

    @contextlib.asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[None]:
        entered.append("in")
        yield
        entered.append("out")

    app = Server("root", lifespan=lifespan).http_app()
    async with serving(app):
        assert entered == ["in"]
    assert entered == ["in", "out"]


async def test_legacy_http_sse_beside_the_mcp_endpoint() -> None:
    app = make_server().http_app(http_sse=True)
    async with serving(app) as base, httpx.AsyncClient(base_url=base) as c:
        async with c.stream("GET", "/sse", headers={"accept": "text/event-stream"}) as stream:
            assert stream.status_code == 200
            [endpoint] = await read_events(stream, 1)
            assert endpoint.event == "endpoint" and endpoint.data.startswith(
                "/messages/?session_id="
            )
            posted = await c.post(endpoint.data, json=initialize_body("2024-11-05"))
            assert posted.status_code == 202
            [answer] = await read_events(stream, 1)
            assert json.loads(answer.data)["result"]["protocolVersion"] == "2024-11-05"
            assert (await c.post("/messages/?session_id=nope", json={})).status_code == 404
        # the Streamable HTTP endpoint is still there
        assert (await c.post("/mcp", headers=HEADERS, json=initialize_body())).status_code == 200


def test_run_rejects_unknown_transports() -> None:
    with pytest.raises(ValueError, match="available"):
        Server("x").run(transport="carrier-pigeon")


async def test_server_run_serves_http_with_uvicorn() -> None:
    port = unused_port()
    script = Path(__file__).with_name("run_http_server.py")
    process = await asyncio.create_subprocess_exec(
        sys.executable, str(script), str(port), stderr=asyncio.subprocess.PIPE
    )
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as c:
            for _ in range(200):
                try:
                    answer = await c.post("/mcp", headers=HEADERS, json=initialize_body())
                    break
                except httpx.ConnectError:
                    await asyncio.sleep(0.02)
            assert answer.status_code == 200
            assert answer.json()["result"]["serverInfo"]["name"] == "run-http"
    finally:
        process.terminate()
        await process.wait()


async def test_a_burst_of_one_id_from_many_clients_leaves_nothing_behind() -> None:
    # Clients number their requests from 1: 500 concurrent 2026-07-28 requests with id 1
    # are each served on their own (no table keyed by id), and once answered nothing stays
    # (it used to leave one serving lane per request, ~20 MB, until later requests came).
    server = Server("burst")
    gate = asyncio.Event()
    started = 0

    @server.tool()
    async def wait() -> str:
        nonlocal started
        started += 1
        await gate.wait()
        return "done"

    app = server.http_app()
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "wait", "arguments": {}, "_meta": MODERN_META},
    }
    headers = {**HEADERS, **MODERN_HEADERS, "mcp-name": "wait"}
    limits = httpx.Limits(max_connections=600)
    async with serving(app) as base, httpx.AsyncClient(base_url=base, limits=limits) as c:
        burst = [
            asyncio.ensure_future(c.post("/mcp", headers=headers, json=message, timeout=30))
            for _ in range(500)
        ]
        while started < 500:
            await asyncio.sleep(0.01)
        assert app.sessionless.busy()
        gate.set()
        answers = await asyncio.gather(*burst)
        assert all(r.status_code == 200 and r.json()["id"] == 1 for r in answers)
        assert not app.sessionless.busy()
        gc.collect()
        assert not [obj for obj in gc.get_objects() if type(obj) is RequestPeer]
