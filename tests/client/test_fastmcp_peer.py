"""Our client against a real FastMCP 4.1.6 server over stdio, in both eras: calls work, and
`listen()` says clearly what the server cannot do (FastMCP has no `subscriptions/listen` and
declares no `listChanged` at 2026-07-28; its handshake-era capabilities do declare it)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from mcpkit import Client
from mcpkit.client import era as era_module
from mcpkit.errors import CapabilityNotDeclared
from tests.peers import fastmcp_python

SERVER = Path(__file__).resolve().parent / "fastmcp_server.py"


@pytest.fixture(autouse=True)
def fresh_era_cache() -> Iterator[None]:
    era_module.ERAS.clear()
    yield
    era_module.ERAS.clear()


async def test_modern_listen_is_refused_with_the_capability_named() -> None:
    # pinned: under load FastMCP may start slower than auto mode's 3 s stdio probe allows
    argv = [str(fastmcp_python()), str(SERVER)]
    async with Client(argv, mode="2026-07-28", timeout=20) as client:
        assert client.era == "modern"
        result = await client.call_tool("add", {"a": 2, "b": 3})
        assert result.structured_content == {"result": 5}
        with pytest.raises(CapabilityNotDeclared, match=r"tools\.listChanged"):
            async with client.listen(tools=True):
                pass


async def test_legacy_listen_is_acknowledged_from_the_capabilities() -> None:
    argv = [str(fastmcp_python()), str(SERVER)]
    async with (
        Client(argv, mode="legacy", timeout=20) as client,
        client.listen(tools=True, prompts=True) as sub,
    ):
        assert sub.acknowledged == {"toolsListChanged": True, "promptsListChanged": True}
