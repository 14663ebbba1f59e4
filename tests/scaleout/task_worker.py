"""A worker for the task heartbeat tests (`mcpkit run task_worker.py --redis URL`): tasks
with a short heartbeat, so that a worker's death is noticed in a fraction of a second."""

from __future__ import annotations

import asyncio
import os

from mcpkit import Server
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
