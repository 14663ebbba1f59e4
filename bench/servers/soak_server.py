"""The soak's server (bench/soak.py): fast calls, slow calls with progress that get cancelled,
a resource, in both eras.

    python soak_server.py stdio
    python soak_server.py http PORT
"""

import asyncio
import sys

from mcpkit import Context, Server

server = Server("soak", version="1.0.0")


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
