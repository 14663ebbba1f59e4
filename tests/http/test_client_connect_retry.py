"""The HTTP client's `initialize` meeting a 503 with a short Retry-After -- a worker that is
shutting down (the real draining refusal), still sent new clients by a balancer that has
not noticed yet -- is sent again after the wait, a bounded number of times; any other 503
is not. Real uvicorn on 127.0.0.1 serving a real mcpkit app."""

from __future__ import annotations

import time
from typing import Any

import pytest

from mcpkit import Client, Server
from mcpkit.errors import MCPError
from mcpkit.transports.http.client import CONNECT_RETRIES
from mcpkit.transports.http.health import refuse_draining

from .servers import Wiretap, serving

server = Server("retried")


@server.tool()
def hello() -> str:
    return "hi"


class DrainingFirst:
    """In front of `app`: the first `refusals` POSTs with no session id get the refusal of a
    worker shutting down (503, Retry-After: 1)."""

    def __init__(self, app: Any, refusals: int) -> None:
        self.app = app
        self.refusals = refusals

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        new = scope["type"] == "http" and scope["method"] == "POST"
        if new and b"mcp-session-id" not in dict(scope["headers"]) and self.refusals:
            self.refusals -= 1
            while (await receive()).get("more_body"):  # read, as the app would have
                pass
            await refuse_draining(send)
            return
        await self.app(scope, receive, send)


def refusals(tap: Wiretap) -> int:
    return sum(1 for entry in tap.posts("initialize") if entry["status"] == 503)


async def test_initialize_refused_by_a_draining_worker_is_sent_again() -> None:
    tap = Wiretap(DrainingFirst(server.http_app(), refusals=2))
    async with serving(tap) as base:
        started = time.monotonic()
        async with Client(f"{base}/mcp", mode="handshake", timeout=30) as client:
            waited = time.monotonic() - started
            assert (await client.call_tool("hello", {})).content[0].text == "hi"
    assert refusals(tap) == 2 and len(tap.posts("initialize")) == 3
    assert waited >= 2 * 1  # what Retry-After asked, each time


async def test_the_retries_are_bounded() -> None:
    tap = Wiretap(DrainingFirst(server.http_app(), refusals=100))
    async with serving(tap) as base:
        with pytest.raises(MCPError, match="shutting down"):
            async with Client(f"{base}/mcp", mode="handshake", timeout=30):
                pass
    assert refusals(tap) == len(tap.posts("initialize")) == 1 + CONNECT_RETRIES


async def test_a_503_without_retry_after_is_not_sent_again() -> None:
    tap = Wiretap(server.http_app(max_sessions=1))
    async with serving(tap) as base:
        url = f"{base}/mcp"
        async with Client(url, mode="handshake", timeout=30):
            with pytest.raises(MCPError, match="too many sessions"):
                async with Client(url, mode="handshake", timeout=30):
                    pass
    assert refusals(tap) == 1 and len(tap.posts("initialize")) == 2
