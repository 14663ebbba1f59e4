"""A handshake-era session served by two workers behind haproxy (round robin, no sticky
sessions), with Redis as the only shared part: our Client and the official SDK's client run
whole sessions whose requests land on both workers."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import redis.asyncio

from mcpkit import Client
from mcpkit.types import TextContent
from tests.scaleout.conftest import Cluster

PREFIX = "mcpkit:http:"


def text_of(result: Any) -> str:
    [content] = result.content
    assert isinstance(content, TextContent)
    return content.text


async def session_ids(redis_url: str) -> set[str]:
    client = redis.asyncio.Redis.from_url(redis_url)
    try:
        keys = [key.decode() async for key in client.scan_iter(PREFIX + "session:*")]
    finally:
        await client.aclose()
    return {key.removeprefix(PREFIX + "session:") for key in keys}


async def test_our_client_runs_a_whole_session_on_both_workers(cluster: Cluster) -> None:
    before = await session_ids(cluster.redis)
    logs: list[tuple[str, Any]] = []
    updates: asyncio.Queue[str] = asyncio.Queue()
    progress: list[float] = []

    async def on_log(params: Any) -> None:
        logs.append((params.level, params.data))

    async def on_updated(uri: str) -> None:
        updates.put_nowait(uri)

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    async with Client(
        cluster.url, mode="handshake", on_log=on_log, on_resource_updated=on_updated
    ) as client:
        [session_id] = await session_ids(cluster.redis) - before
        listed = await client.list_tools()
        assert "which_worker" in [tool.name for tool in listed.tools]
        pids = {text_of(await client.call_tool("which_worker", {})) for _ in range(4)}
        assert len(pids) == 2  # round robin: both workers served this session

        result = await client.call_tool("steps", {"count": 3}, on_progress=on_progress)
        assert text_of(result).startswith("3 steps on ") and progress == [1, 2, 3]

        await client.set_logging_level("warning")  # on one worker; both honour it
        seen = {text_of(await client.call_tool("chatter", {})) for _ in range(2)}
        assert seen == pids
        assert logs == [("warning", "a warning line")] * 2

        await client.subscribe_resource("notes://ours")  # on one worker; both know it
        told = [text_of(await client.call_tool("touch", {"uri": "notes://ours"})) for _ in "ab"]
        assert told == ["1", "1"]
        # The notification travels on the GET stream of the worker that made it: the one
        # holding the client's GET stream delivers it (fan-out between workers: not yet).
        assert await asyncio.wait_for(updates.get(), 10) == "notes://ours"

    assert session_id not in await session_ids(cluster.redis)  # DELETE removed the record
    headers = {
        "mcp-session-id": session_id,
        "mcp-protocol-version": "2025-11-25",
        "accept": "application/json, text/event-stream",
    }
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    async with httpx.AsyncClient() as http:
        answers = [await http.post(cluster.url, json=ping, headers=headers) for _ in "ab"]
    assert [a.status_code for a in answers] == [404, 404]
    assert {a.headers["x-worker"] for a in answers} == {"w1", "w2"}
