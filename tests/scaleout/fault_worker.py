"""A worker for the fault tests: the scale-out app (tests/scaleout/app.py) on a Redis state
with the Redis timeout the test chose, and one more tool whose progress messages name the
worker's process id, so a test knows which worker to kill mid-stream.

    python tests/scaleout/fault_worker.py PORT REDIS_URL TIMEOUT
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from mcpkit import Context
from mcpkit.transports.http.redis_state import RedisState
from tests.scaleout.app import server


@server.tool()
async def pid_steps(ctx: Context, count: int, pause: float) -> str:
    """`count` progress steps, `pause` s apart, each message this worker's process id."""
    for step in range(1, count + 1):
        await ctx.report_progress(step, count, str(os.getpid()))
        await asyncio.sleep(pause)
    return f"{count} steps on {os.getpid()}"


if __name__ == "__main__":
    port, url, timeout = sys.argv[1:4]
    server.run("http", port=int(port), state=RedisState(url, timeout=float(timeout)))
