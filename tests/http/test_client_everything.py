"""mcpkit's client against the npm reference server `@modelcontextprotocol/server-everything`
over HTTP: its `streamableHttp` mode (sessions, SSE answers, resumable event store) and its
`sse` mode (2024-11-05 HTTP+SSE, reached through the fallback). Both listen on `PORT`; one
server process per mode serves the whole module.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import pytest

from mcpkit import Client
from mcpkit.client import Sampling
from mcpkit.testing import texts
from mcpkit.types import CreateMessageRequestParams
from tests.peers import node_env, npm_command

from .servers import unused_port

pytestmark = pytest.mark.interop


def start(mode: str) -> Iterator[str]:
    port = unused_port()
    argv = [*npm_command("mcp-server-everything"), mode]
    env = {**os.environ, **node_env(), "PORT": str(port)}
    process = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"server-everything {mode} did not start on port {port}")
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="module")
def streamable() -> Iterator[str]:
    yield from start("streamableHttp")


@pytest.fixture(scope="module")
def legacy() -> Iterator[str]:
    yield from start("sse")


async def exercise(client: Client) -> None:
    assert client.server_info["name"]
    tools = {tool.name for tool in await client.list_all_tools()}
    assert {"echo", "get-sum", "trigger-long-running-operation"} <= tools
    assert texts(await client.call_tool("echo", {"message": "hi"})) == ["Echo: hi"]
    assert texts(await client.call_tool("get-sum", {"a": 2, "b": 3.5})) == [
        "The sum of 2 and 3.5 is 5.5."
    ]
    seen: list[tuple[float, float | None]] = []
    done = await client.call_tool(
        "trigger-long-running-operation",
        {"duration": 0.3, "steps": 3},
        on_progress=lambda progress, total, message: seen.append((progress, total)),
    )
    assert texts(done) == ["Long running operation completed. Duration: 0.3 seconds, Steps: 3."]
    assert seen == [(1, 3), (2, 3), (3, 3)]


async def test_streamable_http(streamable: str) -> None:
    async with Client(streamable + "/mcp", timeout=10) as client:
        assert client.protocol_version == "2025-11-25"
        await exercise(client)


async def test_server_requests_on_the_post_stream(streamable: str) -> None:
    sampled: list[CreateMessageRequestParams] = []

    def sample(params: CreateMessageRequestParams) -> dict[str, Any]:
        sampled.append(params)
        reply = f"echo: {params.messages[0].content.text}"  # type: ignore[union-attr]
        return {"role": "assistant", "content": {"type": "text", "text": reply}, "model": "m-1"}

    async with Client(streamable + "/mcp", timeout=10, sampling=Sampling(sample)) as client:
        result = await client.call_tool(
            "trigger-sampling-request", {"prompt": "why", "maxTokens": 7}
        )
        assert len(sampled) == 1
        assert "echo: Resource trigger-sampling-request context: why" in texts(result)[0]


async def test_http_sse_through_the_fallback(legacy: str) -> None:
    async with Client(legacy + "/sse", timeout=10) as client:
        await exercise(client)
