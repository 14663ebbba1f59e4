"""The server every scale-out test runs on each worker: tools that say which worker answered,
stream progress, log, change a resource and ask the client something."""

from __future__ import annotations

import asyncio
import os
from typing import Literal

from pydantic import BaseModel

from mcpkit import Context, Server

server = Server("scaleout")


@server.tool()
def which_worker() -> str:
    """This worker's process id."""
    return str(os.getpid())


@server.tool()
async def steps(ctx: Context, count: int = 3, pause: float = 0.0) -> str:
    """Report `count` progress steps, `pause` s apart, then name the worker."""
    for step in range(1, count + 1):
        await ctx.report_progress(step, count, f"step {step}")
        if pause:
            await asyncio.sleep(pause)
    return f"{count} steps on {os.getpid()}"


@server.tool()
async def chatter(ctx: Context) -> str:
    """A debug and a warning log message (the client's level decides which it gets)."""
    await ctx.debug("a debug line")
    await ctx.warning("a warning line")
    return str(os.getpid())


@server.tool()
def touch(uri: str) -> int:
    """Say `uri` changed; how many sessions of this worker were told."""
    return server.resources.notify_updated(uri)


@server.tool()
async def ask(ctx: Context) -> str:
    """Ask the client to sample (a server-to-client request)."""
    result = await ctx.sample("hello?", max_tokens=5)
    return str(result)


@server.resource("data://note")
def note() -> str:
    return "a note"


@server.resource("notes://{name}")
def named_note(name: str) -> str:
    """A note per name: each test subscribes to its own, so that sessions other tests left
    on the shared workers are not told."""
    return f"note {name}"


@server.tool()
async def announce(ctx: Context, text: str) -> str:
    """A warning log message related to no request: it goes on the session's GET stream."""
    ctx.peer.notify("notifications/message", {"level": "warning", "data": text})
    return str(os.getpid())


@server.tool()
def add_tool(name: str) -> str:
    """Register a tool at run time (tools/list_changed to every client); this worker's pid."""
    server.add_tool(lambda: name, name=name)
    return str(os.getpid())


class Go(BaseModel):
    go: bool


@server.tool()
async def confirm(ctx: Context) -> str:
    """Ask the client whether to go on (at 2026-07-28 an input_required round, whose sealed
    requestState any worker opens); the answer and this worker's pid."""
    answer = await ctx.elicit("Go on?", Go)
    go = answer.data is not None and answer.data.go
    return f"{'go' if go else 'stop'} on {os.getpid()}"


@server.tool(task=True)
async def slow_task(seconds: float = 0.0) -> str:
    """May run as a task: wait `seconds`, then name the worker that ran it."""
    await asyncio.sleep(seconds)
    return f"done on {os.getpid()}"


class Order(BaseModel):
    item: str
    count: int
    size: Literal["small", "large"]
    gift: bool = False


@server.tool()
async def ask_form(ctx: Context) -> str:
    """Elicit a form of several field types mid-call; the action, the answer as JSON and
    this worker's pid (for the peer clients' tests)."""
    answer = await ctx.elicit("Your order?", Order)
    data = answer.data.model_dump_json() if answer.data is not None else "null"
    return f"{answer.action} {data} on {os.getpid()}"


if __name__ == "__main__":  # python app.py PORT REDIS PREFIX IDLE_TIMEOUT MAX_SESSIONS
    import sys

    from mcpkit.transports.http.redis_state import RedisState

    port, url, prefix, idle, cap = sys.argv[1:6]
    server.run(
        "http",
        port=int(port),
        state=RedisState(url, prefix=prefix),
        idle_timeout=float(idle),
        max_sessions=int(cap),
    )
