"""What a task costs the server, in process (the ASGI app driven directly: no sockets, no
client library), at 2026-07-28:

- the overhead of a task over an inline call of a tool that returns at once: `tools/call`
  answered inline (the reference: the same tool, the client not declaring tasks) against
  `tools/call` creating the task plus one `tasks/get` round trip; p50 wall-clock per call,
  with the in-memory store and with the Redis store (a real redis-server on 127.0.0.1);
- 10,000 finished tasks held by the in-memory store: the memory they take (tracemalloc,
  after a gc; target under 20 MiB) and the p50 of a `tasks/get` poll on a store that size
  against one on a store holding a single task (target: no slower within noise), polling one
  task again and again (what the store's size alone costs) and a different one each time.

The official SDK (mcp 2.3.0) serves no tasks, so there is no third column: the inline call
is the reference each task figure is a ratio to.

    .venv/bin/python bench/tasks_cost.py               # ~20 s
    .venv/bin/python bench/tasks_cost.py --calls 5000 --held 10000
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

import orjson
from app_cost import BASE_HEADERS, MODERN_META, post

from mcpkit import Server
from mcpkit.server.tasks import TaskSettings

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.peers import redis_server

TASKS = {"extensions": {"io.modelcontextprotocol/tasks": {}}}


def make_app(store: Any = None) -> Any:
    server = Server("bench", tasks=TaskSettings(store=store, max_stored=1_000_000))

    @server.tool(task=True)
    def add(a: int, b: int) -> int:
        """Add two integers (returns at once)."""
        return a + b

    return server.http_app()


def body(request_id: int, method: str, params: dict[str, Any], tasks: bool) -> bytes:
    meta = {**MODERN_META, "io.modelcontextprotocol/clientCapabilities": TASKS if tasks else {}}
    return orjson.dumps(
        {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {**params, "_meta": meta}}
    )


def headers(method: str, name: str) -> list[tuple[bytes, bytes]]:
    return [
        *BASE_HEADERS,
        (b"mcp-protocol-version", b"2026-07-28"),
        (b"mcp-method", method.encode()),
        (b"mcp-name", name.encode()),
    ]


CALL = headers("tools/call", "add")


async def call(app: Any, n: int, tasks: bool) -> dict[str, Any]:
    params = {"name": "add", "arguments": {"a": n, "b": 1}}
    status, raw = await post(app, CALL, body(n, "tools/call", params, tasks))
    assert status == 200, raw
    result: dict[str, Any] = orjson.loads(raw)["result"]
    return result


async def get(app: Any, n: int, task_id: str) -> dict[str, Any]:
    status, raw = await post(
        app, headers("tasks/get", task_id), body(n, "tasks/get", {"taskId": task_id}, True)
    )
    assert status == 200, raw
    result: dict[str, Any] = orjson.loads(raw)["result"]
    return result


async def overhead(store: Any, calls: int) -> tuple[float, float]:
    """p50 microseconds: an inline call; a task's creation plus one tasks/get."""
    app = make_app(store)
    await app.start()
    inline: list[float] = []
    tasked: list[float] = []
    for n in range(calls):  # interleaved: both see the same machine
        started = time.perf_counter()
        await call(app, n, tasks=False)
        inline.append(time.perf_counter() - started)
        started = time.perf_counter()
        created = await call(app, n, tasks=True)
        await get(app, n, created["taskId"])
        tasked.append(time.perf_counter() - started)
    await app.stop()
    warm = calls // 10
    return statistics.median(inline[warm:]) * 1e6, statistics.median(tasked[warm:]) * 1e6


async def held(count: int, polls: int) -> tuple[float, float, float, float]:
    """MiB for `count` finished tasks; p50 us of tasks/get on a server holding 1 task and, in
    the same loop (interleaved), on one holding `count`: the same task polled again and
    again, and a different task each time."""
    small, large = make_app(), make_app()
    await small.start()
    await large.start()
    only = (await call(small, 0, tasks=True))["taskId"]
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    ids = [(await call(large, n, tasks=True))["taskId"] for n in range(count)]
    for _ in range(10):
        await asyncio.sleep(0)  # let the last tasks store their results
    gc.collect()
    used = (tracemalloc.get_traced_memory()[0] - before) / 2**20
    tracemalloc.stop()
    assert (await get(large, 0, ids[-1]))["status"] == "completed"
    one = ids[count // 2]
    timings: tuple[list[float], list[float], list[float]] = ([], [], [])
    for n in range(polls):
        for (app, task_id), spent in zip(
            ((small, only), (large, one), (large, ids[(n * 7919) % count])), timings, strict=True
        ):
            started = time.perf_counter()
            await get(app, n, task_id)
            spent.append(time.perf_counter() - started)
    await small.stop()
    await large.stop()
    empty, same, spread = (statistics.median(t[polls // 10 :]) * 1e6 for t in timings)
    return used, empty, same, spread


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--held", type=int, default=10_000)
    parser.add_argument("--polls", type=int, default=5000)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()

    from mcpkit.stores.redis_tasks import RedisTaskStore

    with redis_server() as url:
        for name in ("memory", "redis"):
            rows = []
            for rep in range(args.reps):
                store = None if name == "memory" else RedisTaskStore(url, prefix=f"bench{rep}:")
                rows.append(asyncio.run(overhead(store, args.calls)))
            inline = statistics.median(r[0] for r in rows)
            task = statistics.median(r[1] for r in rows)
            print(
                f"{name:6} store: inline tools/call p50 {inline:6.1f} us; task create + one "
                f"tasks/get p50 {task:6.1f} us = {task / inline:.2f}x the inline call "
                f"(+{task - inline:.1f} us)"
            )
    used, empty, same, spread = asyncio.run(held(args.held, args.polls))
    print(
        f"{args.held:,} finished tasks held in memory: {used:.1f} MiB (target < 20 MiB); "
        f"tasks/get p50 with 1 task held {empty:.1f} us; with {args.held:,}: the same task "
        f"{same:.1f} us ({same / empty:.2f}x), a different task each poll {spread:.1f} us "
        f"({spread / empty:.2f}x: a task not polled just before misses the Mcp-* header "
        "check cache and the CPU caches, whatever the store's size)"
    )


if __name__ == "__main__":
    main()
