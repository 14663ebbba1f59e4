"""Our client against a real FastMCP 4.1.6 server over stdio, in both eras: calls work, and
`listen()` behaves the same way in both (issue 22, item 3): it subscribes to what the server
can deliver and says so in `acknowledged`, never raising for what it cannot. FastMCP declares
`tools.listChanged` / `prompts.listChanged` in the handshake era; at 2026-07-28 it declares
`listChanged: false` and has no `subscriptions/listen`, so the acknowledgement is empty."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from mcpkit import Client
from mcpkit.client import era as era_module
from tests.peers import fastmcp_python

SERVER = Path(__file__).resolve().parent / "fastmcp_server.py"


@pytest.fixture(autouse=True)
def fresh_era_cache() -> Iterator[None]:
    era_module.ERAS.clear()
    yield
    era_module.ERAS.clear()


async def test_modern_listen_acknowledges_what_fastmcp_can_deliver() -> None:
    # auto mode: however slowly FastMCP starts, its answer to server/discover settles the era
    argv = [str(fastmcp_python()), str(SERVER)]
    async with Client(argv, timeout=30) as client:
        assert client.era == "per-request"
        assert client.supports("tools") and not client.supports("tools", "listChanged")
        result = await client.call_tool("add", {"a": 2, "b": 3})
        assert result.structured_content == {"result": 5}
        async with client.listen(tools=True, prompts=True) as sub:
            assert sub.acknowledged == {}
        assert [note async for note in sub] == []  # nothing delivered; ends once closed
        assert (await client.call_tool("add", {"a": 1, "b": 1})).structured_content == {"result": 2}


async def test_legacy_listen_is_acknowledged_from_the_capabilities() -> None:
    argv = [str(fastmcp_python()), str(SERVER)]
    async with (
        Client(argv, mode="handshake", timeout=30) as client,
        client.listen(tools=True, prompts=True) as sub,
    ):
        assert sub.acknowledged == {"toolsListChanged": True, "promptsListChanged": True}
