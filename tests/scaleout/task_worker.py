"""A worker for the task heartbeat tests (`mcpkit run task_worker.py --redis URL`): tasks
with a short heartbeat, so that a worker's death is noticed in a fraction of a second."""

from __future__ import annotations

import asyncio
import os

from pydantic import BaseModel

from mcpkit import Context, Server
from mcpkit.server.tasks import TaskSettings

HEARTBEAT = 0.2  # seconds; a worker silent for 3 of them has stopped

server = Server("task-worker", tasks=TaskSettings(heartbeat=HEARTBEAT, poll_interval_ms=100))


@server.tool()
def which_worker() -> str:
    """This worker's process id."""
    return str(os.getpid())


@server.tool()
def running_here() -> int:
    """How many task handlers run in this worker."""
    return len(server.tasks.runs)


@server.tool(task=True)
async def slow_task(seconds: float = 0.0) -> str:
    """May run as a task: wait `seconds`, then name the worker that ran it."""
    await asyncio.sleep(seconds)
    return f"done on {os.getpid()}"


class Go(BaseModel):
    go: bool


@server.tool(task=True)
async def ask_in_task(ctx: Context) -> str:
    """May run as a task that asks the client a question (2026-07-28: inputRequests)."""
    answer = await ctx.elicit("Go on?", Go)
    return "go" if answer.data is not None and answer.data.go else "stop"
