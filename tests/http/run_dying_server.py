"""An mcpkit server over Streamable HTTP in a process of its own, for tests that kill it
mid-call; the port is argv[1]. `slow` answers with JSON at the end, `streamed` reports
progress first (the answer comes on an SSE stream)."""

import asyncio
import sys

from mcpkit import Server
from mcpkit.server import Context

server = Server("dying")


@server.tool()
async def slow(seconds: float) -> str:
    await asyncio.sleep(seconds)
    return "done"


@server.tool()
async def streamed(seconds: float, ctx: Context) -> str:
    await ctx.report_progress(1, 2)
    await asyncio.sleep(seconds)
    return "done"


@server.tool()
def hello() -> str:
    return "hi"


if __name__ == "__main__":
    server.run(transport="http", port=int(sys.argv[1]))
