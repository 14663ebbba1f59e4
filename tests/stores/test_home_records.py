"""Both stores of the gateway's home records keep the same contract (in process, and Redis: a
real redis-server): a record reads back until its ttl passes, in the order asked, and a
Redis away is StoreUnavailable (gateway/home.py answers it as the shared state failing)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator

import pytest

from mcpkit.errors import ProtocolError
from mcpkit.gateway.home import HomeRecords
from mcpkit.stores import StoreUnavailable
from mcpkit.stores.home_records import HomeRecordStore, MemoryHomeRecords
from mcpkit.stores.redis_client import connect
from mcpkit.stores.redis_home_records import RedisHomeRecords
from tests.clock import FakeClock
from tests.http.servers import unused_port
from tests.peers import redis_server


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    with redis_server() as url:
        yield url


@pytest.fixture(params=["memory", "redis"])
async def store_and_clock(
    request: pytest.FixtureRequest, redis_url: str
) -> AsyncIterator[tuple[HomeRecordStore, FakeClock | None]]:
    if request.param == "memory":
        clock = FakeClock(1000.0)
        yield MemoryHomeRecords(clock=clock), clock
        return
    client = connect(redis_url, timeout=5)
    try:
        yield RedisHomeRecords(client, f"test:{request.node.name}:", "task:"), None
    finally:
        await client.aclose()


async def test_records_read_back_in_order_until_their_ttl_passes(
    store_and_clock: tuple[HomeRecordStore, FakeClock | None],
) -> None:
    store, clock = store_and_clock
    assert await store.read([]) == []
    await store.write("a", b'{"w":"one"}', 60)
    await store.write("b", b'{"w":"two"}', 1)
    assert await store.read(["b", "none", "a"]) == [b'{"w":"two"}', None, b'{"w":"one"}']
    if clock is not None:
        clock.advance(1)
    async with asyncio.timeout(5):  # Redis expires "b" on its own clock: polled until then
        while await store.read(["b"]) != [None]:
            await asyncio.sleep(0.05)
    assert await store.read(["a"]) == [b'{"w":"one"}']


async def test_the_gateway_reads_a_worker_and_fails_clearly_when_redis_is_away() -> None:
    records = HomeRecords(MemoryHomeRecords(), "one")
    await records.write("t1", 30, {"o": "alice"})
    assert await records.read(["t1", "t2"]) == [{"o": "alice", "w": "one"}, None]
    client = connect(f"redis://:hunter2@127.0.0.1:{unused_port()}/0", timeout=2)
    away = HomeRecords(RedisHomeRecords(client, "p:", "task:"), "one")
    try:
        await away.write("t1", 30, {})  # logged by the store; the state is served here
        with pytest.raises(StoreUnavailable, match="the home records"):
            await away.store.read(["t1"])
        with pytest.raises(ProtocolError, match=r"shared state.*ConnectionError") as caught:
            await away.read(["t1"])
        assert caught.value.code == -32603 and "hunter2" not in str(caught.value)
    finally:
        await client.aclose()
