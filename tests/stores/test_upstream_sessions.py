"""Both stores of the gateway's upstream session records keep the same contract (in process,
and Redis: a real redis-server): the first record wins, a drop only takes what the caller
read, a record follows its downstream session, and the record of an expired session goes to
one claimer only (gateway/resume.py builds its policy on these)."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from mcpkit.stores import StoreUnavailable
from mcpkit.stores.redis_client import connect
from mcpkit.stores.redis_sessions import session_key
from mcpkit.stores.redis_upstreams import RedisUpstreamSessions
from mcpkit.stores.upstream_sessions import MemoryUpstreamSessions, UpstreamSessions
from tests.clock import FakeClock
from tests.http.servers import unused_port
from tests.peers import redis_server

GRACE = 5.0


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    with redis_server() as url:
        yield url


@dataclass
class Downstream:
    """The downstream sessions the records follow: in a dict (memory), or as the session
    records of the HTTP state in Redis."""

    clock: FakeClock
    client: Any = None
    prefix: str = ""
    until: dict[str, float] = field(default_factory=dict)

    def left(self, session_id: str) -> float | None:
        until = self.until.get(session_id)
        return None if until is None or until <= self.clock() else until - self.clock()

    async def alive(self, session_id: str, seconds: float) -> None:
        self.until[session_id] = self.clock() + seconds
        if self.client is not None:
            px = None if seconds == math.inf else round(seconds * 1000)
            await self.client.set(session_key(self.prefix, session_id), b"1", px=px)

    async def gone(self, session_id: str) -> None:
        self.until.pop(session_id, None)
        if self.client is not None:
            await self.client.delete(session_key(self.prefix, session_id))


@pytest.fixture(params=["memory", "redis"])
async def stores(
    request: pytest.FixtureRequest, redis_url: str
) -> AsyncIterator[tuple[UpstreamSessions, Downstream]]:
    clock = FakeClock(1_000_000.0)
    if request.param == "memory":
        downstream = Downstream(clock)
        yield MemoryUpstreamSessions(downstream.left, grace=GRACE, clock=clock), downstream
        return
    client = connect(redis_url, timeout=5)
    prefix = f"test:{request.node.name}:"
    store = RedisUpstreamSessions(client, prefix, "notes", grace=GRACE, clock=clock)
    try:
        yield store, Downstream(clock, client, prefix)
    finally:
        await client.aclose()


async def test_the_first_record_wins_and_a_drop_takes_only_what_was_read(
    stores: tuple[UpstreamSessions, Downstream],
) -> None:
    store, _ = stores
    assert await store.get("s") is None
    assert await store.record("s", b"first", 60) == b"first"
    assert await store.record("s", b"second", 60) == b"first"  # another worker lost the race
    assert not await store.drop("s", b"second")
    assert await store.get("s") == b"first"
    assert await store.drop("s", b"first")
    assert await store.get("s") is None
    assert await store.record("s", b"third", None) == b"third"


async def test_a_taken_record_is_gone_with_its_index_entry(
    stores: tuple[UpstreamSessions, Downstream],
) -> None:
    store, downstream = stores
    await store.record("s", b"sealed", 60)
    assert await store.take("s") == b"sealed"
    assert await store.take("s") is None
    assert await store.get("s") is None
    downstream.clock.advance(61)
    assert await store.claim_expired(10) == []  # nothing left to sweep


async def test_an_expired_sessions_record_is_claimed_once(
    stores: tuple[UpstreamSessions, Downstream],
) -> None:
    store, downstream = stores
    await downstream.alive("s", 60)
    await store.record("s", b"sealed", 60)
    assert await store.claim_expired(10) == []  # not due yet
    await downstream.gone("s")
    downstream.clock.advance(61)
    assert await store.claim_expired(10) == [("s", b"sealed")]
    assert await store.claim_expired(10) == []  # one claimer only
    assert await store.get("s") is None


async def test_a_session_still_used_is_scored_again_not_claimed(
    stores: tuple[UpstreamSessions, Downstream],
) -> None:
    store, downstream = stores
    await store.record("used", b"u", 60)
    await store.record("forever", b"f", 60)
    downstream.clock.advance(61)
    await downstream.alive("used", 100)  # renewed where no upstream client refreshed it
    await downstream.alive("forever", math.inf)
    assert sorted(await store.claim_expired(10)) == [("forever", None), ("used", None)]
    assert await store.claim_expired(10) == []  # scored again; out of the index
    assert await store.get("used") == b"u"
    await downstream.gone("used")
    downstream.clock.advance(101)
    assert await store.claim_expired(10) == [("used", b"u")]


async def test_a_refreshed_record_follows_its_session(
    stores: tuple[UpstreamSessions, Downstream],
) -> None:
    store, downstream = stores
    await store.record("s", b"sealed", 1)
    await store.record("gone", b"g", 1)
    await downstream.alive("s", 100)
    await store.refresh({"s", "gone", "unknown"})
    downstream.clock.advance(2)
    assert await store.claim_expired(10) == [("gone", b"g")]  # "s" is due in 100 s now
    downstream.clock.advance(100)
    await downstream.gone("s")
    assert await store.claim_expired(10) == [("s", b"sealed")]


async def test_claims_come_in_batches(stores: tuple[UpstreamSessions, Downstream]) -> None:
    store, downstream = stores
    for i in range(5):
        await store.record(f"s{i}", b"x", 60)
    downstream.clock.advance(61)
    first = await store.claim_expired(3)
    second = await store.claim_expired(3)
    assert len(first) == 3 and len(second) == 2
    assert {i for i, _ in first + second} == {f"s{i}" for i in range(5)}


async def test_redis_away_is_store_unavailable() -> None:
    client = connect(f"redis://:hunter2@127.0.0.1:{unused_port()}/0", timeout=2)
    store = RedisUpstreamSessions(client, "p:", "", grace=GRACE)
    try:
        for call in (store.get("s"), store.record("s", b"x", 1), store.claim_expired(5)):
            with pytest.raises(StoreUnavailable, match="the upstream session store") as caught:
                await call
            assert "hunter2" not in str(caught.value)
    finally:
        await client.aclose()
