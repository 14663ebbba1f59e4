"""The proxy between real peers: the official SDK (server and client), the npm reference
server, FastMCP 4.1.6 (server and client), and `mcpkit proxy` as a subprocess over stdio and
over HTTP. Era bridging both ways: a 2026-07-28 client to the official SDK's 2025-11-25
server, and a handshake-era client to FastMCP serving 2026-07-28."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, types
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client

from mcpkit import Client
from mcpkit.client import era as era_module
from mcpkit.gateway import proxy
from mcpkit.types import TextContent
from tests.http.servers import serving, unused_port, wait_until_listening
from tests.peers import fastmcp_python, node_env, npm_command

pytestmark = [
    pytest.mark.interop,
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

ROOT = Path(__file__).resolve().parents[2]
OFFICIAL = [sys.executable, str(ROOT / "tests" / "fixtures" / "official_full_server.py")]
FASTMCP_SERVER = ROOT / "tests" / "client" / "fastmcp_server.py"
FASTMCP_CLIENT = Path(__file__).resolve().parent / "fastmcp_client.py"
ASKING = Path(__file__).resolve().parent / "official_asking_server.py"


@pytest.fixture(autouse=True)
def fresh_era_cache() -> Iterator[None]:
    era_module.ERAS.clear()
    yield
    era_module.ERAS.clear()


def text(result: Any) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


async def test_a_2026_client_reaches_the_official_2025_11_25_stdio_server() -> None:
    server = proxy(OFFICIAL, mode="handshake", protocol_version="2025-11-25")
    progress: list[float] = []
    async with (
        serving(server.http_app()) as base,
        Client(base + "/mcp", mode="per-request", timeout=30) as client,
    ):
        assert client.era == "per-request"
        assert server.upstreams.shared.client.protocol_version == "2025-11-25"
        assert client.server_info["name"] == "official-full"
        assert text(await client.call_tool("add", {"a": 2, "b": 40})) == "42"
        counted = await client.call_tool(
            "countdown", {"steps": 3}, on_progress=lambda p, t, m: progress.append(p)
        )
        assert text(counted) == "done"
        failed = await client.call_tool("fail", {"reason": "x"})
        assert failed.is_error and text(failed) == "Error executing tool fail"
        prompt = await client.get_prompt("review", {"code": "x = 1"})
        assert "Review this python code" in prompt.messages[0].content.text  # type: ignore[union-attr]
        read = await client.read_resource("memo://notes/tea")
        assert read.contents[0].text == "notes about tea"  # type: ignore[union-attr]
    assert progress == [1, 2, 3]


async def test_a_handshake_client_reaches_fastmcp_serving_2026_07_28() -> None:
    server = proxy([str(fastmcp_python()), str(FASTMCP_SERVER)], timeout=30)
    async with Client(server, mode="handshake", timeout=30) as client:
        assert client.era == "handshake"
        assert server.upstreams.shared.client.era == "per-request"
        assert [tool.name for tool in await client.list_all_tools()] == ["add"]
        result = await client.call_tool("add", {"a": 2, "b": 3})
        assert result.structured_content == {"result": 5}
        assert "resultType" not in result.to_wire()  # a 2026-07-28 field, not for this era


async def sample(
    context: Any, params: types.CreateMessageRequestParams
) -> types.CreateMessageResult:
    asked = params.messages[0].content.text  # type: ignore[union-attr]
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(type="text", text=f"echo: {asked}"), model="m"
    )


async def test_the_official_client_through_the_proxy_to_server_everything() -> None:
    upstream = [*npm_command("mcp-server-everything"), "stdio"]
    server = proxy(upstream, env=node_env(), mode="handshake")
    async with (
        serving(server.http_app()) as base,
        streamable_http_client(base + "/mcp") as (read, write),
        ClientSession(read, write, sampling_callback=sample) as session,
    ):
        await session.initialize()
        names = {tool.name for tool in (await session.list_tools()).tools}
        # Registered upstream only for a client declaring sampling: the session's own.
        assert {"echo", "trigger-sampling-request"} <= names
        echoed = await session.call_tool("echo", {"message": "hi"})
        assert echoed.content[0].text == "Echo: hi"  # type: ignore[union-attr]
        sampled = await session.call_tool("trigger-sampling-request", {"prompt": "why"})
        assert "echo: Resource trigger-sampling-request context: why" in sampled.content[0].text  # type: ignore[union-attr]


async def test_fastmcp_client_through_the_proxy() -> None:
    server = proxy(OFFICIAL, mode="handshake")
    async with serving(server.http_app()) as base:
        child = await asyncio.create_subprocess_exec(
            str(fastmcp_python()), str(FASTMCP_CLIENT), base + "/mcp",
            stdout=asyncio.subprocess.PIPE,
        )  # fmt: skip
        out, _ = await asyncio.wait_for(child.communicate(), 60)
    assert child.returncode == 0
    got = json.loads(out.decode().strip().splitlines()[-1])
    assert {"add", "countdown", "fail"} <= set(got["tools"])
    assert got["add"] == {"result": 42}


async def test_mcpkit_proxy_over_stdio() -> None:
    command = [sys.executable, "-m", "mcpkit", "proxy", " ".join(OFFICIAL), "--mode", "handshake"]
    async with Client(command, mode="per-request", timeout=30) as client:
        assert client.server_info["name"] == "official-full"
        assert text(await client.call_tool("add", {"a": 1, "b": 2})) == "3"


async def test_mcpkit_proxy_over_http() -> None:
    port = unused_port()
    command = [
        *(sys.executable, "-m", "mcpkit", "proxy", " ".join(OFFICIAL), "--mode", "handshake"),
        *("--transport", "http", "--port", str(port)),
    ]
    child = await asyncio.create_subprocess_exec(*command, cwd=ROOT)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        await asyncio.to_thread(wait_until_listening, url, 30)
        async with Client(url, mode="handshake", timeout=30) as client:
            assert text(await client.call_tool("add", {"a": 1, "b": 2})) == "3"
            prompt = await client.get_prompt("review", {"code": "y"})
            assert "Review this python code" in prompt.messages[0].content.text  # type: ignore[union-attr]
    finally:
        child.terminate()
        await child.wait()


@pytest.mark.parametrize("era", ["handshake", "per-request"])
async def test_sampling_and_elicitation_round_trips_to_the_official_server(era: str) -> None:
    """The official 2025-11-25 server asks mid-call; a handshake client is asked on its
    session, a 2026-07-28 client in input_required rounds (one per ask)."""
    asked: list[str] = []

    def sample(params: Any) -> dict[str, Any]:
        asked.append("sampling")
        reply = f"yes to {params.messages[0].content.text}"
        return {"role": "assistant", "content": {"type": "text", "text": reply}, "model": "m"}

    def elicit(params: Any) -> dict[str, Any]:
        asked.append("elicitation")
        return {"action": "accept", "content": {"name": "Ada"}}

    server = proxy([sys.executable, str(ASKING)], mode="handshake")
    async with (
        serving(server.http_app()) as base,
        Client(base + "/mcp", mode=era, sampling=sample, elicitation=elicit, timeout=30) as client,
    ):
        assert client.era == era
        result = await client.call_tool("ask", {"question": "tea?"})
    assert text(result) == "yes to tea? / accept:Ada"
    assert asked == ["sampling", "elicitation"]


async def test_a_stateless_endpoint_shares_one_upstream_session() -> None:
    """Handshake-era requests of a stateless HTTP endpoint belong to no session: they use the
    shared upstream client, not one opened (and never closed) per request."""
    server = proxy(OFFICIAL, mode="handshake")
    async with (
        serving(server.http_app(stateless=True)) as base,
        streamable_http_client(base + "/mcp") as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        for n in range(3):
            added = await session.call_tool("add", {"a": n, "b": 1})
            assert added.structured_content == {"result": n + 1}
        assert server.upstreams.opened == 1


async def test_a_2024_11_05_http_sse_client_through_the_proxy() -> None:
    """The official SDK's client of the old HTTP+SSE transport, served by the proxy's app."""
    server = proxy(OFFICIAL, mode="handshake")
    async with (
        serving(server.http_app(http_sse=True)) as base,
        sse_client(base + "/sse") as (read, write),
        ClientSession(read, write) as session,
    ):
        result = await session.initialize()
        assert result.server_info.name == "official-full"
        added = await session.call_tool("add", {"a": 2, "b": 40})
        assert added.content[0].text == "42"  # type: ignore[union-attr]
