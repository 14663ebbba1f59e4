"""Both rate-limit bucket stores keep the same contract (in this process, and in Redis: a real
redis-server): the burst, then the wait until a token is back; buckets apart by key; refill
at the rate, never past the burst. A failed Redis is StoreUnavailable without the URL."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from mcpkit.stores import StoreUnavailable
from mcpkit.stores.rate_limits import MemoryRateBuckets, RateBuckets, RedisRateBuckets
from tests.http.servers import unused_port
from tests.peers import redis_server


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    with redis_server() as url:
        yield url


@pytest.fixture(params=["memory", "redis"])
async def buckets(request: pytest.FixtureRequest, redis_url: str) -> AsyncIterator[RateBuckets]:
    if request.param == "memory":
        yield MemoryRateBuckets()
        return
    store = RedisRateBuckets(redis_url, prefix=f"test:{request.node.name}:")
    yield store
    await store.aclose()


async def test_a_bucket_gives_its_burst_then_says_when_a_token_is_back(
    buckets: RateBuckets,
) -> None:
    assert [await buckets.take("k", 0.5, 3) for _ in range(3)] == [0.0, 0.0, 0.0]
    for _ in range(2):  # a refusal takes nothing: the wait does not grow
        assert 1.9 < await buckets.take("k", 0.5, 3) <= 2.0


async def test_buckets_are_kept_apart_by_key(buckets: RateBuckets) -> None:
    assert await buckets.take("a", 1 / 3600, 1) == 0.0
    assert await buckets.take("b", 1 / 3600, 1) == 0.0
    assert 3599 < await buckets.take("a", 1 / 3600, 1) <= 3600  # a token an hour


async def test_a_bucket_refills_at_its_rate_never_past_its_burst(buckets: RateBuckets) -> None:
    assert await buckets.take("k", 5, 2) == 0.0
    assert await buckets.take("k", 5, 2) == 0.0
    wait = await buckets.take("k", 5, 2)
    assert 0 < wait <= 0.2
    await asyncio.sleep(wait + 0.005)  # the time the store said (Redis counts whole ms)
    assert await buckets.take("k", 5, 2) == 0.0
    await asyncio.sleep(1.0)  # five tokens' time: the bucket holds two
    assert [await buckets.take("k", 5, 2) > 0 for _ in range(3)] == [False, False, True]


async def test_an_unreachable_redis_is_store_unavailable_without_the_password() -> None:
    store = RedisRateBuckets(f"redis://:hunter2@127.0.0.1:{unused_port()}/0")
    try:
        with pytest.raises(StoreUnavailable, match="rate limit store") as caught:
            await store.take("k", 1, 1)
        assert "hunter2" not in str(caught.value) and caught.value.__cause__ is None
    finally:
        await store.aclose()


async def test_a_redis_that_goes_away_is_store_unavailable() -> None:
    with redis_server() as url:
        store: Any = RedisRateBuckets(url)
        assert await store.take("k", 1, 1) == 0.0
    try:
        for _ in range(2):  # every take, not only the first
            with pytest.raises(StoreUnavailable):
                await store.take("k", 1, 1)
    finally:
        await store.aclose()
