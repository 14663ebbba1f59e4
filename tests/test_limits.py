"""Every limit in docs/limits.md, pushed past: each refuses with the error it documents, and
the connection (and everything else in flight on it) carries on."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from mcpkit import Server
from mcpkit.errors import ProtocolError
from mcpkit.testing import call, connect
from tests.http.server_fixture import HEADERS, make_server, open_session
from tests.http.servers import serving
from tests.test_stdio_process import RawPeer


class Gate:
    """Holds `wait` calls until opened; counts the calls that reached the handler."""

    def __init__(self) -> None:
        self.opened = asyncio.Event()
        self.waiting = 0
        self._arrived = asyncio.Event()

    async def held(self) -> None:
        self.waiting += 1
        self._arrived.set()
        await self.opened.wait()

    async def until_waiting(self, count: int) -> None:
        """Wait (at most 5 s) until `count` calls are held in the handler."""
        async with asyncio.timeout(5):
            while self.waiting < count:
                self._arrived.clear()
                await self._arrived.wait()

    def set(self) -> None:
        self.opened.set()


def gated_server(limit: int | None) -> tuple[Server, Gate]:
    server = Server("gated", max_requests_in_flight=limit)
    gate = Gate()

    @server.tool()
    async def wait() -> str:
        await gate.held()
        return "done"

    @server.tool()
    def quick() -> str:
        return "quick"

    return server, gate


async def test_requests_in_flight_past_the_limit_are_busy_and_the_rest_carry_on() -> None:
    server, gate = gated_server(3)
    async with connect(server) as client:
        waiting = [asyncio.ensure_future(call(client, "wait")) for _ in range(3)]
        await gate.until_waiting(3)
        with pytest.raises(ProtocolError) as busy:
            await call(client, "quick")
        assert busy.value.code == -32000 and "3 requests" in busy.value.message
        gate.set()
        assert [r["content"][0]["text"] for r in await asyncio.gather(*waiting)] == ["done"] * 3
        assert (await call(client, "quick"))["content"][0]["text"] == "quick"  # room again


async def test_the_in_flight_limit_holds_per_http_session() -> None:
    server, gate = gated_server(2)
    app = server.http_app()
    async with serving(app) as base, httpx.AsyncClient(base_url=base) as c:
        first = await open_session(c)
        other = await open_session(c)

        def tool(request_id: int, name: str) -> dict[str, object]:
            params = {"name": name, "arguments": {}}
            return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}

        held = [
            asyncio.ensure_future(c.post("/mcp", headers=first, json=tool(i, "wait"), timeout=10))
            for i in (1, 2)
        ]
        await gate.until_waiting(2)
        busy = await c.post("/mcp", headers=first, json=tool(3, "quick"), timeout=5)
        assert busy.json()["error"]["code"] == -32000
        fine = await c.post("/mcp", headers=other, json=tool(3, "quick"), timeout=5)
        assert fine.json()["result"]["content"][0]["text"] == "quick"  # another session's room
        gate.set()
        assert all(r.status_code == 200 for r in await asyncio.gather(*held))


async def test_nesting_past_the_parser_depth_is_a_parse_error_and_the_pipe_survives() -> None:
    peer = await RawPeer.start()
    try:
        await peer.initialize()
        deep = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":' + b"[" * 1100
        deep += b"]" * 1100 + b"}}"
        peer.send(deep)
        refused = await peer.receive()
        assert refused["error"]["code"] == -32700 and "depth" in refused["error"]["message"]
        assert (await peer.request(2, "ping")) == {"jsonrpc": "2.0", "id": 2, "result": {}}
    finally:
        await peer.close()


async def test_deep_arguments_within_the_parser_depth_get_an_answer() -> None:
    peer = await RawPeer.start()
    try:
        await peer.initialize()
        nested = b"[" * 1000 + b'"x"' + b"]" * 1000  # orjson writes only 254 levels: by hand
        head = b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo",'
        peer.send(head + b'"arguments":{"text":' + nested + b"}}}")
        answer = await peer.receive(timeout=10)
        assert answer["id"] == 3 and ("result" in answer or "error" in answer)
        assert (await peer.request(4, "ping"))["result"] == {}
    finally:
        await peer.close()


@pytest.mark.parametrize(
    ("options", "extra"),
    [
        ({"max_headers": 20}, [(f"x-h{i}", "v") for i in range(30)]),
        ({"max_header_bytes": 4096}, [("x-big", "a" * 5000)]),
        ({}, [("x-big", "a" * 70_000)]),  # the default: 64 KiB
    ],
)
async def test_too_many_or_too_large_headers_are_431(
    options: dict[str, int], extra: list[tuple[str, str]]
) -> None:
    app = make_server().http_app(**options)
    async with serving(app) as base, httpx.AsyncClient(base_url=base) as c:
        ping = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
        refused = await c.post("/mcp", headers=[*HEADERS.items(), *extra], content=ping)
        assert refused.status_code == 431
        assert "Header Fields Too Large" in refused.json()["error"]["message"]
        await open_session(c)  # ordinary requests carry on
