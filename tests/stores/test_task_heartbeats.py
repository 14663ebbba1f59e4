"""The heartbeats a shared task store keeps (`Heartbeats`, RedisTaskStore on a real
redis-server), and what a `Heartbeat` reading them does with a stopped worker's tasks."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

import pytest

from mcpkit.server.task_heartbeat import STOPPED, Heartbeat
from mcpkit.stores import MemoryTaskStore, TaskRecord
from mcpkit.stores.redis_tasks import RedisTaskStore
from mcpkit.stores.tasks import Heartbeats
from tests.clock import FakeClock
from tests.peers import redis_server


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    with redis_server() as url:
        yield url


@pytest.fixture
async def store(redis_url: str, request: pytest.FixtureRequest) -> AsyncIterator[RedisTaskStore]:
    store = RedisTaskStore(redis_url, prefix=f"beats:{request.node.name}:")
    yield store
    await store.aclose()


def task(task_id: str, worker: str | None, status: str = "working") -> TaskRecord:
    return TaskRecord(task_id, None, "tools/call", status, 1e9, 1e9, None, 500, worker=worker)


async def test_a_beat_lasts_its_ttl_and_reads_the_statuses_of_its_tasks(
    store: RedisTaskStore,
) -> None:
    assert isinstance(store, Heartbeats) and not isinstance(MemoryTaskStore(), Heartbeats)
    await store.create(task("t1", "w1"))
    await store.create(task("t2", "w1"))
    await store.update("t2", {"status": "cancelled"})  # through another worker
    await store.send_answers("t1", {"elicit-1": {"action": "decline"}}, 60)  # another worker
    beat = await store.beat("w1", 0.05, ["t1", "t2", "gone"], asking=["t1", "t2"])
    assert beat.statuses == {"t1": "working", "t2": "cancelled"}
    assert beat.answers == {"t1": {"elicit-1": {"action": "decline"}}}
    again = await store.beat("w1", 0.05, ["t1"], asking=["t1"])
    assert again.answers == {}  # taken: given once
    assert await store.alive(["w1", "w2"]) == {"w1"}
    await store._redis.pexpire(store._worker_key("w1"), 1)  # the ttl runs out
    for _ in range(10_000):  # a millisecond of Redis time: a few round trips
        if not await store.alive(["w1"]):
            break
    else:
        raise AssertionError("the beat outlived its ttl")
    assert await store.alive([]) == set()


async def test_a_stopped_workers_unfinished_tasks_are_failed_for_everyone(
    store: RedisTaskStore,
) -> None:
    reader = Heartbeat(store, store, 5.0, {})
    alive = Heartbeat(store, store, 5.0, {})
    async with alive.creating():  # beats before its record is written
        await store.create(task("kept", alive.worker))
    await store.create(task("orphan", "dead-worker"))
    await store.create(task("finished", "dead-worker", "completed"))
    await store.create(task("mine", reader.worker))  # this process's own: never suspected
    records = [await store.get(i) for i in ("kept", "orphan", "finished", "mine")]
    vetted = await reader.vet([r for r in records if r is not None])
    assert [r.status for r in vetted] == ["working", "failed", "completed", "working"]
    failed = vetted[1]
    assert failed.status_message == STOPPED and failed.error == {
        "code": -32603,
        "message": STOPPED,
    }
    stored = await store.get("orphan")
    assert stored is not None and stored.status == "failed"  # what every worker now reads
    await alive.aclose()


async def test_a_task_store_clock_does_not_expire_beats(redis_url: str) -> None:
    # Heartbeats are Redis expiries (real time), not the store's clock: a test clock that
    # stands still must not keep a dead worker alive, nor a fast one kill a live one.
    clock = FakeClock(0.0)
    store = RedisTaskStore(redis_url, prefix="beats:clock:", clock=clock)
    try:
        await store.beat("w", 60, [])
        clock.advance(3600)
        assert await store.alive(["w"]) == {"w"}
    finally:
        await store.aclose()


class BrokenRun:
    """A running task whose answer handling fails unexpectedly."""

    asking = True

    def cancel(self) -> None:
        raise AssertionError("not cancelled")

    async def answer(self, responses: dict[str, Any]) -> None:
        raise RuntimeError("a bug while answering")


async def until(check: Callable[[], Awaitable[bool]], what: str) -> None:
    deadline = time.monotonic() + 10
    while not await check():
        assert time.monotonic() < deadline, what
        await asyncio.sleep(0.01)  # polling Redis: nothing to await in between


async def test_the_beat_goes_on_after_a_failure_while_applying_it(store: RedisTaskStore) -> None:
    heartbeat = Heartbeat(store, store, 0.05, {"t": BrokenRun()}, asking=0.01)
    async with heartbeat.creating():
        await store.create(task("t", heartbeat.worker))
    await store.send_answers("t", {"elicit-1": {"action": "decline"}}, 60)
    answers = store._answers_key("t")

    async def taken() -> bool:
        return not await store._redis.exists(answers)

    await until(taken, "the answers were never taken")
    await store._redis.delete(store._worker_key(heartbeat.worker))

    async def beating() -> bool:
        return bool(await store.alive([heartbeat.worker]))

    await until(beating, "the heartbeat stopped after the failure")
    await heartbeat.aclose()
