"""An upstream that misbehaves on request, for the proxy's limits: big answers, floods of
notifications, calls that never end, and a record of how many calls ran at once."""

from __future__ import annotations

import asyncio

from mcpkit import Server
from mcpkit.server import Context

server = Server("limited", version="1.0.0")
seen = {"in_flight": 0, "most": 0}


@server.tool()
def echo(text: str) -> str:
    """Answer `text` back (as big as it was sent)."""
    return text


@server.tool()
def big(size: int) -> str:
    """An answer of `size` characters."""
    return "x" * size


@server.tool()
async def busy() -> str:
    """Take a moment, noting how many calls ran at once."""
    seen["in_flight"] += 1
    seen["most"] = max(seen["most"], seen["in_flight"])
    try:
        await asyncio.sleep(0.2)  # the time the calls overlap in, not a wait for an event
    finally:
        seen["in_flight"] -= 1
    return "done"


@server.tool()
async def flood(count: int, ctx: Context, answer: bool = False) -> str:
    """Send `count` log messages, then never answer (or, with `answer`, answer at once)."""
    for number in range(count):
        await ctx.info(f"note {number}")
    if not answer:
        await asyncio.Event().wait()
    return "flooded"


@server.tool()
async def hang() -> str:
    """Never answer."""
    await asyncio.Event().wait()
    return "never"
