"""An mcpkit server for tests/gateway/test_workers_home.py (over stdio, or HTTP given a port):
task tools, and tools that ask their client mid-call."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from pydantic import BaseModel

from mcpkit import Server
from mcpkit.server import Context

server = Server("home-upstream", version="1.0.0")


class Name(BaseModel):
    name: str


@server.tool()
async def ask(question: str, ctx: Context) -> str:
    """No task: asks the client's model, then the user's name."""
    sampled = await ctx.sample(question)
    answer = await ctx.elicit("Your name?", Name)
    name = answer.data.name if answer.data is not None else "?"
    return f"{sampled.content.text} / {name}"  # type: ignore[union-attr]


@server.tool()
async def ask_then_hold(mark: str, ctx: Context) -> str:
    """No task: asks the client's model, then runs until cancelled. It writes "holding" in
    the file `mark` once answered, then "cancelled" (the test's only view of this process,
    one of a worker's)."""
    await ctx.sample("hold?")
    Path(mark).write_text("holding")
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        Path(mark).write_text("cancelled")
        raise
    return "never"


@server.tool()
async def ask_then_work(seconds: float, ctx: Context) -> str:
    """No task: asks the client's model, then works for `seconds` before answering."""
    await ctx.sample("work?")
    await asyncio.sleep(seconds)
    return "worked"


@server.tool(task=True)
async def report(topic: str) -> str:
    """A short task."""
    return f"report on {topic}"


@server.tool(task="required")
async def forever() -> str:
    """A task that runs until cancelled."""
    await asyncio.Event().wait()
    return "never"


if __name__ == "__main__":  # stdio; `home_upstream.py PORT`: Streamable HTTP on PORT
    if len(sys.argv) > 1:
        server.run("http", host="127.0.0.1", port=int(sys.argv[1]))
    else:
        server.run()
