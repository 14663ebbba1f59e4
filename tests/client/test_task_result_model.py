"""`TaskHandle.result()` returns the tool's `CallToolResult` model, as `call_tool` does (issue
23: it was the wire dict). Reading it as a dict, as code written before did, still answers for
one release, with a DeprecationWarning at the caller's line. Both eras, the real client and
server in process."""

from __future__ import annotations

import asyncio

import pytest

from mcpkit import Client, Server
from mcpkit.types import CallToolResult, TextContent

MODES = ["handshake", "per-request"]


def make_server() -> Server:
    server = Server("tasks")

    @server.tool(task=True)
    async def build(topic: str) -> str:
        await asyncio.sleep(0)
        return f"report on {topic}"

    return server


@pytest.mark.parametrize("mode", MODES)
async def test_the_task_result_is_the_model_call_tool_returns(mode: str) -> None:
    async with Client(make_server(), mode=mode) as client:
        handle = await client.start_tool("build", {"topic": "tides"})
        result = await handle.result()
        called = await client.call_tool("build", {"topic": "tides"})
    assert isinstance(result, CallToolResult)
    assert result.content == [TextContent(type="text", text="report on tides")]
    assert isinstance(called, CallToolResult)
    assert (result.content, result.is_error) == (called.content, called.is_error)


@pytest.mark.parametrize("mode", MODES)
async def test_reading_the_result_as_a_dict_still_works_and_warns(mode: str) -> None:
    async with Client(make_server(), mode=mode) as client:
        result = await (await client.start_tool("build", {"topic": "reefs"})).result()
    with pytest.warns(DeprecationWarning, match=r"\['content'\].*CallToolResult") as seen:
        assert result["content"][0]["text"] == "report on reefs"  # type: ignore[index]
    assert seen[0].filename == __file__
    with pytest.warns(DeprecationWarning):
        assert result.get("isError", False) is False  # type: ignore[attr-defined]
    with pytest.warns(DeprecationWarning):
        assert "content" in result  # type: ignore[operator]
