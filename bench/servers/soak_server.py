"""The soak's server (bench/soak.py): fast calls, slow calls with progress that get cancelled,
a resource, in both eras.

    python soak_server.py stdio
    python soak_server.py http PORT

With SOAK_TRACEMALLOC=FILE the server traces its allocations and, every minute from the
second on, appends to FILE the ten source lines whose memory grew most since the first minute
(what to look at when the soak's RSS creeps).
"""

import asyncio
import contextlib
import os
import sys
import tracemalloc
from collections.abc import AsyncIterator

from mcpkit import Context, Server


async def trace_growth(path: str) -> None:
    await asyncio.sleep(60)
    baseline = tracemalloc.take_snapshot()
    minute = 1
    while True:
        await asyncio.sleep(60)
        minute += 1
        grown = tracemalloc.take_snapshot().compare_to(baseline, "lineno")[:10]
        with open(path, "a") as out:
            out.write(f"-- minute {minute}: growth since minute 1\n")
            out.writelines(f"{stat}\n" for stat in grown)


@contextlib.asynccontextmanager
async def traced(_: Server) -> AsyncIterator[None]:
    tracemalloc.start()
    task = asyncio.get_running_loop().create_task(trace_growth(os.environ["SOAK_TRACEMALLOC"]))
    yield None
    task.cancel()


server = Server(
    "soak", version="1.0.0", lifespan=traced if os.environ.get("SOAK_TRACEMALLOC") else None
)


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
async def slow(ctx: Context, seconds: float = 0.2) -> str:
    """Sleep in steps, reporting progress (the soak cancels some of these)."""
    steps = 4
    for step in range(steps):
        await ctx.report_progress(step + 1, steps)
        await asyncio.sleep(seconds / steps)
    return "done"


@server.resource("memo://state")
def state() -> str:
    return "ok"


if __name__ == "__main__":
    if sys.argv[1] == "stdio":
        server.run()
    else:
        server.run(transport="http", host="127.0.0.1", port=int(sys.argv[2]), log_level="warning")
