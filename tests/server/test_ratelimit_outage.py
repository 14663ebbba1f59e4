"""`RateLimit` when its Redis buckets fail (a real redis-server, stopped or paused): requests
go through (fail open, the default) or get -32603 (`fail_open=False`, on `RateLimit` or in the
older spelling on `RedisBuckets`), and the `mcpkit.ratelimit` log says once that the outage
began and once that it ended, not once per request."""

from __future__ import annotations

import asyncio
import logging
import time

import pytest
import redis.asyncio

from mcpkit import Server
from mcpkit.errors import ProtocolError
from mcpkit.server.middleware import RateLimit, RedisBuckets
from mcpkit.testing import call, connect
from tests.peers import redis_server


def app(limit: RateLimit) -> Server:
    server = Server("app", middleware=[limit])

    @server.tool()
    def echo(text: str) -> str:
        return text

    return server


def outage_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "mcpkit.ratelimit"]


async def test_a_paused_redis_lets_requests_through_logged_once_per_outage(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, "mcpkit.ratelimit")
    with redis_server() as url:
        buckets = RedisBuckets(url, timeout=0.2)
        control = redis.asyncio.Redis.from_url(url)
        try:
            async with connect(app(RateLimit(1000, per="global", buckets=buckets))) as client:
                await call(client, "echo", text="before")
                await control.client_pause(1500, all=True)
                for text in ("a", "b", "c"):  # each take times out: let through
                    await call(client, "echo", text=text)
                assert len(outage_lines(caplog)) == 1
                deadline = time.monotonic() + 10
                while len(outage_lines(caplog)) < 2 and time.monotonic() < deadline:
                    await call(client, "echo", text="until Redis answers")
                    await asyncio.sleep(0.05)
        finally:
            await control.aclose()
            await buckets.aclose()
    began, ended = outage_lines(caplog)
    assert began.startswith("requests let through by the rate limit until its store answers")
    assert "the rate limit store is unavailable (Redis: TimeoutError)" in began
    assert ended == "the rate limit store answers again: limits applied"


@pytest.mark.parametrize(
    "spelling", ["RateLimit(fail_open=False)", "RedisBuckets(fail_open=False)"]
)
async def test_fail_closed_refuses_with_internal_error_while_redis_is_down(
    spelling: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "mcpkit.ratelimit")
    with redis_server() as url:
        on_store = spelling.startswith("RedisBuckets")
        buckets = RedisBuckets(url, fail_open=not on_store)
        limit = RateLimit(1000, buckets=buckets, fail_open=None if on_store else False)
    try:
        async with connect(app(limit)) as client:
            for _ in range(2):
                with pytest.raises(ProtocolError) as raised:
                    await call(client, "echo", text="down")
                error = raised.value
                assert (error.code, error.message) == (
                    -32603,
                    "Internal error: rate limit store unavailable",
                )
    finally:
        await buckets.aclose()
    [line] = outage_lines(caplog)
    assert line.startswith("requests refused by the rate limit until its store answers")
