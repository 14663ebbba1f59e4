"""Both lease stores keep the same contract (in process, and Redis: a real redis-server): one
holder at a time, and renew and release act only for the holder, so a holder slower than its
ttl never ends the lease another took after it (issue 35: the gateway deleted its upstream
lock without checking it was still its own)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass

import pytest

from mcpkit.stores import StoreUnavailable
from mcpkit.stores.lease import Leases, MemoryLease
from mcpkit.stores.redis_client import connect
from mcpkit.stores.redis_lease import RedisLease
from tests.clock import FakeClock
from tests.http.servers import unused_port
from tests.peers import redis_server

TTL = 0.2  # seconds: Redis's own clock makes it pass, so short


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    with redis_server() as url:
        yield url


@dataclass
class LeaseAndClock:
    lease: Leases
    clock: FakeClock | None  # None: Redis, whose clock is real

    async def once_ttl_passed(self, attempt: Callable[[], Awaitable[bool]]) -> None:
        """Let `TTL` pass, then `attempt` succeeds (on Redis: as soon as it does)."""
        if self.clock is not None:
            self.clock.advance(TTL)
            assert await attempt()
            return
        async with asyncio.timeout(5):
            while not await attempt():
                await asyncio.sleep(0.01)  # polled until Redis expired the key


@pytest.fixture(params=["memory", "redis"])
async def leases(request: pytest.FixtureRequest, redis_url: str) -> AsyncIterator[LeaseAndClock]:
    if request.param == "memory":
        clock = FakeClock(1000.0)
        yield LeaseAndClock(MemoryLease(clock=clock), clock)
        return
    client = connect(redis_url, timeout=5)
    try:
        yield LeaseAndClock(RedisLease(client, prefix=f"test:{request.node.name}:"), None)
    finally:
        await client.aclose()


async def test_one_holder_at_a_time_and_only_it_renews_or_releases(leases: LeaseAndClock) -> None:
    lease = leases.lease
    assert await lease.acquire("k", "a", 60)
    assert not await lease.acquire("k", "b", 60)
    assert not await lease.acquire("k", "a", 60)  # held: even by the same owner
    assert await lease.renew("k", "a", 60)
    assert not await lease.renew("k", "b", 60)
    assert not await lease.release("k", "b")
    assert await lease.acquire("other", "b", 60)  # another key is another lease
    assert await lease.release("k", "a")
    assert not await lease.release("k", "a")  # gone already
    assert not await lease.renew("k", "a", 60)
    assert await lease.acquire("k", "b", 60)


async def test_a_holder_past_its_ttl_neither_releases_nor_renews_the_next_holders(
    leases: LeaseAndClock,
) -> None:
    lease = leases.lease
    assert await lease.acquire("opening", "a", TTL)
    await leases.once_ttl_passed(lambda: lease.acquire("opening", "b", 60))
    assert not await lease.release("opening", "a")  # A is late: B's lease stays
    assert not await lease.renew("opening", "a", 60)
    assert not await lease.acquire("opening", "c", 60)  # still B's
    assert await lease.release("opening", "b")
    assert await lease.acquire("opening", "c", 60)


async def test_a_ttl_must_be_positive(leases: LeaseAndClock) -> None:
    for ttl in (0, -1.0):
        with pytest.raises(ValueError, match="positive"):
            await leases.lease.acquire("k", "a", ttl)
        with pytest.raises(ValueError, match="positive"):
            await leases.lease.renew("k", "a", ttl)


async def test_redis_away_is_store_unavailable_logged_once_per_outage(
    caplog: pytest.LogCaptureFixture,
) -> None:
    client = connect(f"redis://:hunter2@127.0.0.1:{unused_port()}/0", timeout=2)
    lease = RedisLease(client)
    try:
        with caplog.at_level(logging.INFO, logger="mcpkit.stores"):
            for attempt in (lambda: lease.acquire("k", "a", 1), lambda: lease.release("k", "a")):
                with pytest.raises(StoreUnavailable, match="the lease store") as caught:
                    await attempt()
                assert "hunter2" not in str(caught.value)
    finally:
        await client.aclose()
    lines = [r.getMessage() for r in caplog.records if r.name == "mcpkit.stores"]
    assert lines == ["the lease store is unavailable (Redis: ConnectionError)"]
