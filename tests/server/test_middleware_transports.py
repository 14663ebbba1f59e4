"""Middleware on every transport (issue 28): stdio (a real process), Streamable HTTP in both
eras (real uvicorn on 127.0.0.1), the 2024-11-05 HTTP+SSE transport (the official SDK's
client), and the Redis rate limit shared by two worker processes (a real redis-server)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import ClientSession
from mcp.client.sse import sse_client

from mcpkit import Client
from mcpkit.errors import ProtocolError
from mcpkit.testing import call, texts
from tests.http.servers import script_serving, serving
from tests.peers import redis_server
from tests.server.middleware_server import build

SCRIPT = Path(__file__).with_name("middleware_server.py")


async def test_middleware_runs_over_stdio() -> None:
    async with Client([sys.executable, str(SCRIPT)], mode="handshake", timeout=30) as client:
        result = await call(client, "echo", text="hi")
    assert texts(result) == ["hi", "stamped (handshake, no session)"]


@pytest.mark.parametrize(
    ("era", "expected"),
    [
        ("handshake", "stamped (handshake, session)"),
        ("2026-07-28", "stamped (per-request, no session)"),
    ],
)
async def test_middleware_runs_over_streamable_http_in_both_eras(era: str, expected: str) -> None:
    async with (
        serving(build().http_app()) as base,
        Client(base + "/mcp", mode=era, timeout=30) as client,
    ):
        result = await call(client, "echo", text="hi")
    assert texts(result) == ["hi", expected]


async def test_middleware_runs_over_the_2024_11_05_http_sse_transport() -> None:
    async with (
        serving(build().http_app(http_sse=True)) as base,
        sse_client(base + "/sse") as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        result = await session.call_tool("echo", {"text": "hi"})
    assert [block.text for block in result.content] == [  # type: ignore[union-attr]
        "hi",
        "stamped (handshake, session)",
    ]


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    with redis_server() as url:
        yield url


async def test_the_redis_rate_limit_is_shared_by_two_workers(redis_url: str) -> None:
    """Three calls in all, across two worker processes: the fourth is refused on either (with
    a bucket per process, each would allow three)."""
    with (
        script_serving(SCRIPT, "http", redis_url) as first,
        script_serving(SCRIPT, "http", redis_url) as second,
    ):
        async with (
            Client(first, mode="handshake", timeout=30) as one,
            Client(second, mode="2026-07-28", timeout=30) as two,
        ):
            await call(one, "echo", text="1")
            await call(two, "echo", text="2")
            await call(one, "echo", text="3")
            for client in (two, one):
                with pytest.raises(ProtocolError) as raised:
                    await call(client, "echo", text="over")
                assert (raised.value.code, raised.value.message) == (-32000, "Rate limit exceeded")
                assert raised.value.data["retryAfter"] > 3000  # a token an hour
            assert (await one.list_tools()).tools  # only tools/call is limited
