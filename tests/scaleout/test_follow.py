"""Following a resumed stream whose request still runs on another worker
(transports/http/follow.py), through the event-log port: with the in-process twin, what is
stored after the client's event arrives as it is stored, each with its id, until the answer;
with a real redis-server that goes away, the stream ends with one log line (nothing
swallowed silently)."""

from __future__ import annotations

import logging

import pytest
import redis.asyncio

from mcpkit.stores.events import MemoryEventStore
from mcpkit.stores.redis_events import RedisEventStore
from mcpkit.transports.http.follow import Following, follow_stream
from mcpkit.transports.http.streams import ResponseStream
from tests.peers import redis_server

PROGRESS = b'{"jsonrpc":"2.0","method":"notifications/progress","params":{}}'
ANSWER = b'{"jsonrpc":"2.0","id":1,"result":{}}'


async def _until_finished(stream: ResponseStream) -> list[bytes]:
    """What the stream carried until it finished (each wait bounded)."""
    carried: list[bytes] = []
    while not stream.finished:
        assert await stream.wait(10), "the followed stream went quiet"
        carried += [out.data for out in stream.take()]
    return carried + [out.data for out in stream.take()]


async def test_a_followed_stream_gets_what_is_stored_next_until_the_answer() -> None:
    store = MemoryEventStore()
    store.append("s", "3.1", b"")
    store.append("s", "3.2", PROGRESS)
    followed = await follow_stream(store, "s", "3.1", Following(idle=5, block_ms=50))
    assert followed is not None
    store.append("s", "4.3", b"another stream")
    store.append("s", "3.4", ANSWER)
    assert await _until_finished(followed.stream) == [PROGRESS, ANSWER]
    assert [followed.record("3", d) for d in (PROGRESS, ANSWER)] == ["3.2", "3.4"]
    assert await follow_stream(store, "s", "3.9", Following()) is None


async def test_a_followed_stream_ends_with_a_log_line_when_redis_goes_away(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with redis_server() as url:
        client = redis.asyncio.Redis.from_url(url, socket_timeout=1)
        store = RedisEventStore(client, prefix="follow:")
        store.append("s", "3.1", b"")
        following = Following(idle=30, block_ms=100)
        followed = await follow_stream(store, "s", "3.1", following)
        assert followed is not None
    try:
        with caplog.at_level(logging.WARNING, logger="mcpkit.http"):
            assert await _until_finished(followed.stream) == []
        lines = [r.getMessage() for r in caplog.records if "followed stream" in r.getMessage()]
        assert len(lines) == 1 and "event store is unavailable" in lines[0]
    finally:
        await client.aclose()
