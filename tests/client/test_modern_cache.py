"""The response cache in the modern era: cacheable results (server/discover, list pages,
resources/read) are served while fresh (`ttlMs`), keyed by method and params, dropped by a
matching notification, never kept for input-required retries; `cache=False` turns it off.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import orjson
import pytest

from mcpkit import Client
from mcpkit.client import era as era_module
from mcpkit.protocol import Outgoing
from mcpkit.transports.memory import memory_pair
from tests.clock import FakeClock

JSONObject = dict[str, Any]
DISCOVERED: JSONObject = {
    "resultType": "complete",
    "supportedVersions": ["2026-07-28"],
    "capabilities": {"tools": {"listChanged": True}, "resources": {}},
    "ttlMs": 60_000,
    "cacheScope": "public",
}


@pytest.fixture(autouse=True)
def fresh_era_cache() -> Iterator[None]:
    era_module.ERAS.clear()
    yield
    era_module.ERAS.clear()


class CachingServer:
    """Answers with cache hints; counts what reaches it; can send notifications unasked."""

    def __init__(self, *, tools_ttl: int = 60_000, read_ttl: int = 60_000) -> None:
        self.tools_ttl = tools_ttl
        self.read_ttl = read_ttl
        self.seen: list[JSONObject] = []
        self.version = 0
        self.client_end, self._end = memory_pair()
        self._task = asyncio.get_running_loop().create_task(self._serve())

    async def _serve(self) -> None:
        while (data := await self._end.read()) is not None:
            message = orjson.loads(data)
            if "id" not in message:
                continue
            self.seen.append(message)
            self._send({"id": message["id"], "result": self._result(message)})

    def _result(self, message: JSONObject) -> JSONObject:
        method, params = message["method"], message.get("params") or {}
        if method == "server/discover":
            return DISCOVERED
        if method == "tools/list":
            tool = {"name": f"tool-v{self.version}", "inputSchema": {"type": "object"}}
            page: JSONObject = {"tools": [tool], "ttlMs": self.tools_ttl, "cacheScope": "public"}
            if "cursor" not in params:
                page["nextCursor"] = "2"
            return {"resultType": "complete", **page}
        if method == "resources/read":
            if "inputResponses" not in params and params["uri"] == "file:///ask":
                return {
                    "resultType": "input_required",
                    "inputRequests": {"r": {"method": "roots/list", "params": {}}},
                }
            text = {"uri": params["uri"], "text": f"v{self.version}"}
            return {
                "resultType": "complete",
                "contents": [text],
                "ttlMs": self.read_ttl,
                "cacheScope": "private",
            }
        return {"resultType": "complete"}

    def _send(self, message: JSONObject) -> None:
        self._end.write([Outgoing(orjson.dumps({"jsonrpc": "2.0", **message}))])

    def notify(self, method: str, params: JSONObject | None = None) -> None:
        self._send({"method": method, "params": params or {}})

    def count(self, method: str) -> int:
        return sum(1 for m in self.seen if m["method"] == method)


async def test_fresh_list_pages_come_from_the_cache_until_a_list_changed() -> None:
    server = CachingServer()
    heard = asyncio.Event()
    async with Client(
        server.client_end, mode="auto", on_list_changed=lambda kind: heard.set()
    ) as client:
        first = await client.list_tools()
        again = await client.list_tools()
        assert again == first and type(again) is type(first)  # same as a fresh answer
        assert server.count("tools/list") == 1
        await client.list_tools(cursor="2")  # another page: another key
        assert server.count("tools/list") == 2
        server.version = 1
        server.notify("notifications/tools/list_changed")
        await asyncio.wait_for(heard.wait(), 5)  # the callback runs after the cache forgot
        changed = await client.list_tools()
        assert changed.tools[0].name == "tool-v1"
        assert server.count("tools/list") == 3


async def test_expired_results_are_fetched_again() -> None:
    server = CachingServer(tools_ttl=50_000)
    clock = FakeClock()
    async with Client(server.client_end, mode="auto", clock=clock) as client:
        await client.list_tools()
        clock.advance(49.9)
        await client.list_tools()
        assert server.count("tools/list") == 1
        clock.advance(0.1)
        await client.list_tools()
        assert server.count("tools/list") == 2


async def test_resource_reads_cache_and_updates_invalidate_but_retries_never_cache() -> None:
    server = CachingServer()
    updated = asyncio.Event()
    async with Client(
        server.client_end,
        mode="auto",
        roots=["file:///r"],
        on_resource_updated=lambda uri: updated.set(),
    ) as client:
        await client.read_resource("file:///a")
        await client.read_resource("file:///a")
        assert server.count("resources/read") == 1
        server.version = 1
        server.notify("notifications/resources/updated", {"uri": "file:///a"})
        await asyncio.wait_for(updated.wait(), 5)
        fresh = await client.read_resource("file:///a")
        assert fresh.contents[0].text == "v1"  # type: ignore[union-attr]
        assert server.count("resources/read") == 2
        await client.read_resource("file:///ask")  # input_required, then the retry
        await client.read_resource("file:///ask")
        assert server.count("resources/read") == 2 + 4  # neither round kept


async def test_cache_false_sends_every_request() -> None:
    server = CachingServer()
    async with Client(server.client_end, mode="auto", cache=False) as client:
        await client.list_tools()
        await client.list_tools()
    assert server.count("tools/list") == 2


async def test_ping_always_reaches_the_server() -> None:
    server = CachingServer()
    async with Client(server.client_end, mode="auto") as client:
        await client.ping()
        await client.ping()
    assert server.count("server/discover") == 3  # the probe, then each ping
