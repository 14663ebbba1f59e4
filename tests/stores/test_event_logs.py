"""Both event logs keep one contract (in this process, `MemoryEventStore`, and in Redis,
`RedisEventStore` against a real redis-server): bounded per session, a replay returns the
named stream's later events once and in order, an event dropped (or never stored) cannot be
resumed from, "made" messages no sent entry matches come after the sent ones exactly once,
and a stream is followed as it is written (`tail`)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
import redis.asyncio

from mcpkit.protocol.http import event_id
from mcpkit.stores import StoreUnavailable
from mcpkit.stores.events import EventLog, MemoryEventStore
from mcpkit.stores.redis_events import RedisEventStore
from tests.peers import redis_server


@pytest.fixture(params=["memory", "redis"])
async def make(request: pytest.FixtureRequest, redis_url: str) -> AsyncIterator[Any]:
    """Makes event logs (`max_events` given) of one kind."""
    clients: list[Any] = []

    def made(max_events: int = 1000) -> EventLog:
        if request.param == "memory":
            return MemoryEventStore(max_events)
        client = redis.asyncio.Redis.from_url(redis_url)
        clients.append(client)
        prefix = f"test:{request.node.name}:{len(clients)}:"
        return RedisEventStore(client, prefix=prefix, max_events=max_events, ttl=60)

    yield made
    for client in clients:
        await client.aclose()


async def test_events_are_bounded_and_replayed_in_order_once(make: Any) -> None:
    store = make(max_events=4)
    for n in range(1, 7):  # two streams interleaved: 5.1 6.2 5.3 6.4 5.5 6.6
        store.append("s", f"{5 + (n + 1) % 2}.{n}", b"m%d" % n)
    assert await store.replay_after("s", "5.1") is None  # dropped: the cap is 4
    assert await store.replay_after("s", "5.3") == [("5.5", b"m5")]
    assert await store.replay_after("s", "6.4") == [("6.6", b"m6")]
    assert await store.replay_after("s", "9.9") is None  # never stored
    assert await store.replay_after("s", "garbage") is None
    assert await store.replay_after("nobody", "5.3") is None


async def test_replay_skips_priming_events_and_other_sessions(make: Any) -> None:
    store = make()
    store.append("s", event_id("1", 1), b"")  # priming
    store.append("s", event_id("1", 2), b"a")
    store.append("s", event_id("2", 3), b"other stream")
    store.append("s", event_id("1", 4), b"b")
    store.append("t", event_id("1", 5), b"other session")
    assert await store.replay_after("s", "1.1") == [("1.2", b"a"), ("1.4", b"b")]
    assert await store.replay_after("s", "2.3") == []
    store.forget("s")
    await store.flush()
    assert await store.replay_after("s", "1.1") is None
    assert await store.replay_after("t", "1.5") == []


async def test_made_messages_no_sent_entry_matches_are_replayed_once_across_resumes(
    make: Any,
) -> None:
    """GET stream events: "made" ones (by a worker that does not send the stream) come after
    the sent ones, unless a sent entry of the same data followed them (the home sent it); one
    replayed is stored as sent, so a later resume does not give it again."""
    store = make()
    store.append("s", "0.1", b"")  # the home's priming event
    store.made("s", "0.70", b"update")  # made elsewhere; the home sent it after
    store.append("s", "0.2", b"update")
    store.made("s", "0.71", b"update")  # the home was gone: never sent
    store.made("s", "0.72", b"log")
    assert await store.replay_after("s", "0.1") == [
        ("0.2", b"update"),
        ("0.71", b"update"),
        ("0.72", b"log"),
    ]
    assert await store.replay_after("s", "0.2") == [("0.71", b"update"), ("0.72", b"log")]
    # After the last: nothing comes again, the made ones were stored as sent
    assert await store.replay_after("s", "0.72") == []
    assert await store.replay_after("s", "0.71") == [("0.72", b"log")]


async def test_a_stream_is_followed_as_it_is_written(make: Any) -> None:
    store = make()
    store.append("s", "3.1", b"")
    store.append("s", "3.2", b"a")
    store.append("s", "4.3", b"other")
    await store.flush()
    assert await store.tail("s", "3.9") is None
    tail = await store.tail("s", "3.1")
    assert tail is not None
    assert tail.stored == [("3.2", b"a"), ("4.3", b"other")]
    assert await tail.next(0.05) == []  # nothing new within the wait
    waiting = asyncio.ensure_future(tail.next(5))
    await asyncio.sleep(0)
    store.append("s", "3.4", b"b")
    store.append("s", "3.5", b"c")
    found = list(await waiting)
    while len(found) < 2:  # Redis may hand the burst over in two reads
        found += await tail.next(5)
    assert found == [("3.4", b"b"), ("3.5", b"c")]


async def test_a_redis_that_goes_away_is_store_unavailable_while_following() -> None:
    with redis_server() as url:
        client = redis.asyncio.Redis.from_url(url, socket_timeout=1)
        store = RedisEventStore(client, prefix="gone:")
        store.append("s", "3.1", b"a")
        tail = await store.tail("s", "3.1")
        assert tail is not None
    try:
        with pytest.raises(StoreUnavailable):
            await tail.next(0.1)
        with pytest.raises(StoreUnavailable):
            await store.replay_after("s", "3.1")
    finally:
        await client.aclose()
