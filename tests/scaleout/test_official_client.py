"""The official SDK's client through haproxy in front of two workers sharing Redis: its
session is served by both workers, and its DELETE ends the session on both."""

from __future__ import annotations

import httpx
import pytest
from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client

from tests.scaleout.conftest import Cluster
from tests.scaleout.test_sessions import session_ids


def text(result: types.CallToolResult) -> str:
    [content] = result.content
    assert isinstance(content, types.TextContent)
    return content.text


# The SDK warns that logging is deprecated from 2026-07-28 on; this session is 2025-11-25.
@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
async def test_the_official_client_runs_a_session_on_both_workers(cluster: Cluster) -> None:
    before = await session_ids(cluster.redis)
    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    async with (
        streamable_http_client(cluster.url) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        [session_id] = await session_ids(cluster.redis) - before
        listed = await session.list_tools()
        assert "steps" in {tool.name for tool in listed.tools}
        pids = {text(await session.call_tool("which_worker", {})) for _ in range(4)}
        assert len(pids) == 2
        steps = await session.call_tool("steps", {"count": 2}, progress_callback=on_progress)
        assert text(steps).startswith("2 steps") and progress == [1, 2]
        await session.set_logging_level("error")
        await session.subscribe_resource("notes://official")
        told = {text(await session.call_tool("touch", {"uri": "notes://official"})) for _ in "ab"}
        assert told == {"1"}  # both workers know the subscription

    assert session_id not in await session_ids(cluster.redis)
    headers = {"mcp-session-id": session_id, "accept": "application/json, text/event-stream"}
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    async with httpx.AsyncClient() as http:
        answers = [await http.post(cluster.url, json=ping, headers=headers) for _ in "ab"]
    assert [a.status_code for a in answers] == [404, 404]
