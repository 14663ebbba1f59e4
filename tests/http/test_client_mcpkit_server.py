"""mcpkit's HTTP client against mcpkit's own HTTP server app, in every mode it serves."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcpkit import Client

from .server_fixture import make_server
from .servers import serving

MODES: dict[str, dict[str, Any]] = {
    "auto": {},
    "json": {"response_mode": "json"},
    "sse": {"response_mode": "sse"},
    "stateless": {"stateless": True},
}


@pytest.mark.parametrize("mode", list(MODES))
async def test_modes(mode: str) -> None:
    app = make_server().http_app(**MODES[mode])
    async with serving(app) as base, Client(base + "/mcp", timeout=5) as client:
        assert client.server_info["name"] == "http-fixture"
        added = await client.call_tool("add", {"a": 2, "b": 3})
        assert added.structured_content == {"result": 5}
        calls = [
            client.request("tools/call", {"name": "slow", "arguments": {"seconds": 0.2}})
            for _ in range(3)
        ]
        assert len(await asyncio.wait_for(asyncio.gather(*calls), 0.8)) == 3
        if mode != "json":
            progress: list[float] = []
            await client.request(
                "tools/call",
                {"name": "chatty", "arguments": {"steps": 3}},
                on_progress=lambda p, t, m: progress.append(p),
            )
            assert progress == [1, 2, 3]


async def test_legacy_endpoint_through_the_fallback() -> None:
    app = make_server().http_app(http_sse=True)
    async with serving(app) as base, Client(base + "/sse", timeout=5) as client:
        added = await client.call_tool("add", {"a": 2, "b": 3})
        assert added.structured_content == {"result": 5}
