"""What a fuzz campaign against the HTTP server found (issue 13), each pinned by a test that
failed before its fix: real uvicorn on 127.0.0.1, raw HTTP."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from mcpkit import Server

from .server_fixture import HEADERS, initialize_body, make_server, open_session
from .servers import serving

PINGS = [
    {"jsonrpc": "2.0", "id": 41, "method": "ping"},
    {"jsonrpc": "2.0", "id": 42, "method": "ping"},
]
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


@pytest.mark.parametrize("version", ["2025-11-25", "2025-06-18"])
async def test_a_batch_at_a_revision_that_forbids_batches_is_refused_at_once(version: str) -> None:
    # It hung: no answer, ids 41 and 42 "in flight" for the session's life.
    async with serving(make_server().http_app()) as base, httpx.AsyncClient(base_url=base) as c:
        headers = await open_session(c, version)
        refused = await c.post("/mcp", headers=headers, json=PINGS, timeout=5)
        assert refused.status_code == 400
        error = refused.json()["error"]
        assert error["code"] == -32600 and "2025-03-26" in error["message"]
        again = await c.post("/mcp", headers=headers, json=PINGS[0], timeout=5)
        assert again.status_code == 200 and again.json() == {
            "jsonrpc": "2.0",
            "id": 41,
            "result": {},
        }


async def test_a_batch_at_2025_03_26_is_still_answered_as_one_array() -> None:
    async with serving(make_server().http_app()) as base, httpx.AsyncClient(base_url=base) as c:
        headers = await open_session(c, "2025-03-26")
        answer = await c.post("/mcp", headers=headers, json=PINGS, timeout=5)
        assert answer.status_code == 200
        assert sorted(item["id"] for item in answer.json()) == [41, 42]


async def test_initialize_in_a_batch_makes_no_session() -> None:
    # 50 of those used to exhaust a 50-session cap: real clients then got 503.
    app = make_server().http_app(max_sessions=3)
    async with serving(app) as base, httpx.AsyncClient(base_url=base) as c:
        for _ in range(10):
            refused = await c.post("/mcp", headers=HEADERS, json=[initialize_body()], timeout=5)
            assert refused.status_code == 400 and refused.json()["error"]["code"] == -32600
            assert "mcp-session-id" not in refused.headers
        assert len(app.sessions) == 0
        await open_session(c)  # a real client still gets in


@pytest.mark.parametrize(
    "last_event_id", ["0.\u00b2", "1.\u00b2", "\u0661.1", "1." + "9" * 5000, "x.y", "0.1.2"]
)
async def test_a_malformed_last_event_id_is_never_a_500(last_event_id: str) -> None:
    async with serving(make_server().http_app()) as base, httpx.AsyncClient(base_url=base) as c:
        headers = await open_session(c)
        chatty = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "chatty", "arguments": {"steps": 2}, "_meta": {"progressToken": 1}},
        }
        streamed = await c.post("/mcp", headers=headers, json=chatty, timeout=5)
        assert streamed.headers["content-type"] == "text/event-stream"  # the store holds events
        raw = {**headers, "accept": "text/event-stream", "last-event-id": last_event_id}
        # non-ASCII header values go out as UTF-8 bytes, as a hostile client would send them
        encoded = [(k.encode(), v.encode()) for k, v in raw.items()]
        async with c.stream("GET", "/mcp", headers=encoded, timeout=5) as answer:
            assert answer.status_code in (200, 400), await answer.aread()


@pytest.mark.parametrize("name", ["mcp-name", "mcp-method", "mcp-protocol-version", "origin"])
async def test_a_duplicated_header_that_matters_is_refused(name: str) -> None:
    # Two Mcp-Name lines (echo, then fail) with a body naming fail were accepted: the check
    # read one line. Two Origin lines with the evil one first passed.
    values = {
        "mcp-name": ("add", "evil"),
        "mcp-method": ("tools/call", "tools/list"),
        "mcp-protocol-version": ("2026-07-28", "2025-11-25"),
        "origin": ("https://evil.example", "http://localhost:1"),
    }[name]
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "add", "arguments": {"a": 1, "b": 2}, "_meta": MODERN_META},
    }
    single = {
        **HEADERS,
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "add",
    }
    single.pop(name, None)
    headers = [*single.items(), (name, values[0]), (name, values[1])]
    async with serving(make_server().http_app()) as base, httpx.AsyncClient(base_url=base) as c:
        refused = await c.post("/mcp", headers=headers, content=json.dumps(message), timeout=5)
        assert refused.status_code == 400
        assert f"duplicate {name}" in refused.json()["error"]["message"]


async def test_two_session_ids_are_refused() -> None:
    async with serving(make_server().http_app()) as base, httpx.AsyncClient(base_url=base) as c:
        first = await open_session(c)
        second = await open_session(c)
        headers = [*first.items(), ("mcp-session-id", second["mcp-session-id"])]
        ping = {"jsonrpc": "2.0", "id": 3, "method": "ping"}
        refused = await c.post("/mcp", headers=headers, json=ping, timeout=5)
        assert refused.status_code == 400


@pytest.mark.parametrize(
    "host", ["localhost:{port}@evil.example", "evil.example@localhost:{port}", "localhost:{port}/x"]
)
async def test_a_host_header_that_is_not_a_host_is_misdirected(host: str) -> None:
    async with serving(make_server().http_app()) as base, httpx.AsyncClient(base_url=base) as c:
        port = base.rsplit(":", 1)[1]
        headers = {**HEADERS, "host": host.format(port=port)}
        refused = await c.post("/mcp", headers=headers, json=initialize_body(), timeout=5)
        assert refused.status_code == 421


async def test_another_supported_revision_than_the_session_s_is_refused() -> None:
    async with serving(make_server().http_app()) as base, httpx.AsyncClient(base_url=base) as c:
        headers = await open_session(c, "2025-11-25")
        ping = {"jsonrpc": "2.0", "id": 3, "method": "ping"}
        other = {**headers, "mcp-protocol-version": "2024-11-05"}
        refused = await c.post("/mcp", headers=other, json=ping, timeout=5)
        assert refused.status_code == 400
        assert "2024-11-05" in refused.json()["error"]["message"]
        assert (await c.post("/mcp", headers=headers, json=ping, timeout=5)).status_code == 200


async def test_an_integer_past_64_bits_is_a_result_not_a_tool_error() -> None:
    async with serving(make_server().http_app()) as base, httpx.AsyncClient(base_url=base) as c:
        headers = await open_session(c)
        big = 18446744073709551615
        call = {
            "jsonrpc": "2.0",
            "id": 5,
            "method": "tools/call",
            "params": {"name": "add", "arguments": {"a": big, "b": 1}},
        }
        answer = await c.post("/mcp", headers=headers, json=call, timeout=5)
        result = answer.json()["result"]
        assert result["isError"] is False
        assert result["structuredContent"] == {"result": big + 1}


async def test_a_slow_body_is_cut_off_and_holds_nothing() -> None:
    # 150 connections trickling a body were held open indefinitely (slowloris).
    server = Server("slow-body")
    app = server.http_app(body_timeout=0.3)
    async with serving(app) as base:
        host, port = base.removeprefix("http://").split(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{"
        )
        await writer.drain()
        status_line = await asyncio.wait_for(reader.readline(), 5)
        assert b" 408 " in status_line
        writer.close()
