"""The Redis event store on its own, against a real redis-server: bounded per session, a
replay returns the named stream's later events once and in order, and an event that was
dropped (or never stored) cannot be resumed from."""

from __future__ import annotations

import redis.asyncio

from mcpkit.stores.redis_events import RedisEventStore


async def test_events_are_bounded_and_replayed_in_order_once(redis_url: str) -> None:
    client = redis.asyncio.Redis.from_url(redis_url)
    store = RedisEventStore(client, prefix="events-test:", max_events=4, ttl=60)
    try:
        for n in range(1, 7):  # two streams interleaved: 5.1 6.2 5.3 6.4 5.5 6.6
            store.append("s", f"{5 + (n + 1) % 2}.{n}", b"m%d" % n)
        assert await store.replay_after("s", "5.1") is None  # dropped: the cap is 4
        assert await store.replay_after("s", "5.3") == [("5.5", b"m5")]
        assert await store.replay_after("s", "6.4") == [("6.6", b"m6")]
        assert await store.replay_after("s", "9.9") is None  # never stored
        assert await client.xlen(store.key("s")) == 4
        assert 0 < await client.pttl(store.key("s")) <= 60_000
        store.forget("s")
        await store.flush()
        assert await client.exists(store.key("s")) == 0
    finally:
        await client.aclose()


async def test_made_messages_no_sent_entry_matches_are_replayed_once_across_resumes(
    redis_url: str,
) -> None:
    """GET stream events: "made" ones (by a worker that does not send the stream) come after
    the sent ones, unless a sent entry of the same data followed them (the home sent it); one
    replayed is stored as sent, so a later resume does not give it again."""
    client = redis.asyncio.Redis.from_url(redis_url)
    store = RedisEventStore(client, prefix="made-test:", ttl=60)
    try:
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
    finally:
        store.forget("s")
        await store.flush()
        await client.aclose()
