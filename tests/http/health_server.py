"""A server for the health and drain tests: `slow` waits until `release` is called (a tool
call held in flight for as long as a test wants; `slow_steps` too, after a progress step),
`in_flight` counts them."""

import asyncio

from mcpkit import Context, Server

server = Server("health")
released = asyncio.Event()
waiting: list[None] = []  # one entry per `slow` call held


@server.tool()
async def slow() -> str:
    waiting.append(None)
    await released.wait()
    return "finished"


@server.tool()
async def slow_steps(ctx: Context) -> str:
    """`slow` after a progress step: its answer, when it comes, ends an event stream."""
    await ctx.report_progress(1, 2)
    return await slow()


@server.tool()
def in_flight() -> int:
    """How many `slow` calls are waiting."""
    return len(waiting)


@server.tool()
def release() -> str:
    released.set()
    return "released"


@server.tool()
def hello() -> str:
    return "hi"
