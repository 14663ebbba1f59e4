"""Both task stores keep the same contract (the in-memory one and Redis, a real redis-server):
records readable once created, terminal records never overwritten, ttl expiry, the bound,
paging by owner; and with Redis, a restarted server process still answers for its tasks."""

from __future__ import annotations

import asyncio
import sys
import textwrap
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from mcpkit import Client
from mcpkit.stores import MemoryTaskStore, StoreFull, TaskRecord, TaskStore
from mcpkit.stores.redis_tasks import RedisTaskStore
from tests.clock import FakeClock
from tests.http.servers import script_serving
from tests.peers import redis_server


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    with redis_server() as url:
        yield url


@pytest.fixture(params=["memory", "redis"])
async def store_and_clock(
    request: pytest.FixtureRequest, redis_url: str
) -> AsyncIterator[tuple[TaskStore, FakeClock]]:
    clock = FakeClock(1_000_000.0)
    if request.param == "memory":
        store: Any = MemoryTaskStore(max_tasks=5, clock=clock)
    else:
        prefix = f"test:{request.node.name}:"
        store = RedisTaskStore(redis_url, prefix=prefix, max_tasks=5, clock=clock)
    yield store, clock
    await store.aclose()


def record(
    task_id: str, clock: FakeClock, owner: str | None = "alice", ttl_ms: int | None = 60_000
):
    return TaskRecord(task_id, owner, "tools/call", "working", clock(), clock(), ttl_ms, 500)


async def test_a_created_record_reads_back_and_updates(
    store_and_clock: tuple[TaskStore, FakeClock],
) -> None:
    store, clock = store_and_clock
    await store.create(record("t1", clock))
    got = await store.get("t1")
    assert got is not None and got.status == "working" and got.owner == "alice"
    clock.now += 1
    updated = await store.update("t1", {"status": "input_required", "status_message": "ask"})
    assert updated is not None and updated.updated_at == clock.now
    assert (await store.get("t1")).status_message == "ask"  # type: ignore[union-attr]
    assert await store.get("nope") is None
    assert await store.update("nope", {"status": "failed"}) is None


async def test_a_terminal_record_is_never_overwritten(
    store_and_clock: tuple[TaskStore, FakeClock],
) -> None:
    store, clock = store_and_clock
    await store.create(record("t1", clock))
    await store.update("t1", {"status": "cancelled"})
    late = await store.update("t1", {"status": "completed", "result": {"content": []}})
    assert late is not None and late.status == "cancelled" and late.result is None
    assert (await store.get("t1")).status == "cancelled"  # type: ignore[union-attr]


async def test_results_round_trip_exactly(store_and_clock: tuple[TaskStore, FakeClock]) -> None:
    store, clock = store_and_clock
    await store.create(record("t1", clock))
    result = {"content": [], "structuredContent": {"a": [1, {}], "b": None}, "isError": False}
    await store.update("t1", {"status": "completed", "result": result})
    assert (await store.get("t1")).result == result  # type: ignore[union-attr]


async def test_paging_shows_an_owner_only_its_own_records(
    store_and_clock: tuple[TaskStore, FakeClock],
) -> None:
    store, clock = store_and_clock
    for n in range(4):
        clock.now += 1
        await store.create(record(f"a{n}", clock, owner="alice" if n != 2 else "bob"))
    first, cursor = await store.list("alice", None, 2)
    assert [r.task_id for r in first] == ["a0", "a1"] and cursor is not None
    second, after = await store.list("alice", cursor, 2)
    assert [r.task_id for r in second] == ["a3"] and after is None
    assert [r.task_id for r in (await store.list("bob", None, 10))[0]] == ["a2"]
    with pytest.raises(ValueError):
        await store.list("alice", "not-a-cursor", 2)


async def test_the_bound_refuses_and_expired_records_make_room(
    store_and_clock: tuple[TaskStore, FakeClock], redis_url: str
) -> None:
    store, clock = store_and_clock
    for n in range(5):
        await store.create(record(f"t{n}", clock, ttl_ms=1000 if n == 0 else None))
    with pytest.raises(StoreFull):
        await store.create(record("t5", clock))
    clock.now += 2  # t0's ttl has passed by the store's clock (not yet by Redis's)
    assert await store.get("t0") is None
    assert await store.update("t0", {"status_message": "late"}) is None
    assert "t0" not in [r.task_id for r in (await store.list("alice", None, 10))[0]]
    await store.create(record("t5", clock))  # the expired one made room
    assert await store.get("t5") is not None


SERVER = textwrap.dedent(
    """
    import asyncio, sys
    from mcpkit import Server
    from mcpkit.server.tasks import TaskSettings
    from mcpkit.stores.redis_tasks import RedisTaskStore

    store = RedisTaskStore(sys.argv[1], prefix="restart:")
    server = Server("restartable", tasks=TaskSettings(store=store))

    @server.tool(task=True)
    async def report(topic: str) -> str:
        await asyncio.sleep(0.1)
        return f"report on {topic}"

    server.run()
    """
)


async def test_a_restarted_server_process_still_answers_for_its_tasks(
    redis_url: str, tmp_path: Path
) -> None:
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    argv = [sys.executable, str(script), redis_url]
    async with Client(argv, mode="2026-07-28") as first:
        handle = await first.start_tool("report", {"topic": "tides"})
        assert (await handle.result()).content[0].text == "report on tides"
    # that process has exited; a new one, on the same Redis, knows the task
    async with Client(argv, mode="2026-07-28") as second:
        again = second.task(handle.task_id)
        state = await again.status()
        assert state.status == "completed"
        assert (await again.result()).content[0].text == "report on tides"


HTTP_SERVER = textwrap.dedent(
    """
    import asyncio, sys
    from mcpkit import Server
    from mcpkit.server.tasks import TaskSettings
    from mcpkit.stores.redis_tasks import RedisTaskStore

    store = RedisTaskStore(sys.argv[1], prefix="shared:")
    server = Server("replica", tasks=TaskSettings(store=store))

    @server.tool(task=True)
    async def report(topic: str, seconds: float = 0.3) -> str:
        await asyncio.sleep(seconds)
        return f"report on {topic}"

    server.run(transport="http", port=int(sys.argv[2]))
    """
)


async def test_two_server_processes_on_one_redis_answer_for_each_others_tasks(
    redis_url: str, tmp_path: Path
) -> None:
    script = tmp_path / "replica.py"
    script.write_text(HTTP_SERVER)
    with script_serving(script, redis_url) as first, script_serving(script, redis_url) as second:
        async with Client(first, mode="2026-07-28") as a, Client(second, mode="2026-07-28") as b:
            handle = await a.start_tool("report", {"topic": "tides"})
            elsewhere = b.task(handle.task_id)  # the other process, which does not run it
            assert (await elsewhere.status()).status == "working"
            assert (await elsewhere.result()).content[0].text == "report on tides"
            # a cancel made in one process holds although the handler runs in the other
            slow = await a.start_tool("report", {"topic": "x", "seconds": 0.5})
            await b.task(slow.task_id).cancel()
            await asyncio.sleep(0.8)  # the handler has finished meanwhile
            assert (await slow.status()).status == "cancelled"
