"""The bounded in-memory event store: replays one stream, forgets sessions, drops the oldest."""

from __future__ import annotations

from mcpkit.protocol.http import event_id
from mcpkit.transports.http.event_store import MemoryEventStore


async def test_replay_is_per_stream_and_skips_priming_events() -> None:
    store = MemoryEventStore()
    store.append("s", event_id("1", 1), b"")  # priming
    store.append("s", event_id("1", 2), b"a")
    store.append("s", event_id("2", 3), b"other stream")
    store.append("s", event_id("1", 4), b"b")
    store.append("t", event_id("1", 5), b"other session")
    assert await store.replay_after("s", "1.1") == [("1.2", b"a"), ("1.4", b"b")]
    assert await store.replay_after("s", "1.2") == [("1.4", b"b")]
    assert await store.replay_after("s", "2.3") == []
    assert await store.replay_after("s", "garbage") is None
    assert await store.replay_after("nobody", "1.1") is None


async def test_bounded_and_forgetful() -> None:
    store = MemoryEventStore(max_events=3)
    for n in range(1, 6):
        store.append("s", event_id("1", n), b"x")
    assert len(store) == 3
    assert await store.replay_after("s", "1.1") is None  # what followed it is partly gone
    assert await store.replay_after("s", "1.3") == [("1.4", b"x"), ("1.5", b"x")]
    store.forget("s")
    assert len(store) == 0
