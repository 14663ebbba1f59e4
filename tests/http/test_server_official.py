"""The official SDK's Streamable HTTP client (mcp 2.3.0) against mcpkit's server on uvicorn:
stateful JSON, stateful SSE and stateless."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from mcp import ClientSession, types
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client

from .server_fixture import make_server
from .servers import serving

pytestmark = pytest.mark.interop

MODES: dict[str, dict[str, Any]] = {
    "stateful-json": {"response_mode": "json"},
    "stateful-sse": {"response_mode": "sse"},
    "stateful-auto": {},
    "stateless": {"stateless": True},
}


async def list_roots(context: Any) -> types.ListRootsResult:
    return types.ListRootsResult(roots=[types.Root(uri="file:///tmp/a", name="a")])


@pytest.mark.parametrize("mode", list(MODES))
async def test_official_client(mode: str) -> None:
    app = make_server().http_app(**MODES[mode])
    async with (
        serving(app) as base,
        streamable_http_client(base + "/mcp") as (read, write),
        ClientSession(read, write, list_roots_callback=list_roots) as session,
    ):
        result = await session.initialize()
        assert result.server_info.name == "http-fixture"
        tools = await session.list_tools()
        assert {"add", "chatty", "slow", "ask"} <= {tool.name for tool in tools.tools}
        added = await session.call_tool("add", {"a": 2, "b": 40})
        assert added.structured_content == {"result": 42}
        answers = await asyncio.gather(
            *(session.call_tool("slow", {"seconds": 0.2}) for _ in range(4))
        )
        assert [a.content[0].text for a in answers] == ["done"] * 4  # type: ignore[union-attr]
        progress: list[float] = []

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            progress.append(value)

        chatted = await session.call_tool("chatty", {"steps": 3}, progress_callback=on_progress)
        assert chatted.content[0].text == "chatted"  # type: ignore[union-attr]
        if mode != "stateful-json":  # a JSON answer has no room for progress
            assert progress == [1, 2, 3]
        if mode != "stateless":  # no server->client requests without a session
            asked = await session.call_tool("ask", {})
            assert asked.content[0].text == "1 roots"  # type: ignore[union-attr]
        await session.send_ping()
    if mode != "stateless":
        await asyncio.sleep(0.05)
        assert len(app.sessions) == 0  # the client's DELETE ended the session


async def test_official_http_sse_client() -> None:
    app = make_server().http_app(http_sse=True)
    async with (
        serving(app) as base,
        sse_client(base + "/sse") as (read, write),
        ClientSession(read, write, list_roots_callback=list_roots) as session,
    ):
        result = await session.initialize()
        assert result.server_info.name == "http-fixture"
        added = await session.call_tool("add", {"a": 2, "b": 40})
        assert added.content[0].text == "42"  # type: ignore[union-attr]
        asked = await session.call_tool("ask", {})
        assert asked.content[0].text == "1 roots"  # type: ignore[union-attr]
    await asyncio.sleep(0.05)
    assert app.http_sse.sessions == {}  # the session ended with its stream
