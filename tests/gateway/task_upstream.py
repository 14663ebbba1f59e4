"""An mcpkit server with task tools, the proxy's upstream over stdio in tests/gateway/
test_proxy_tasks.py: `python task_upstream.py`."""

from __future__ import annotations

import asyncio

from pydantic import BaseModel

from mcpkit import Server
from mcpkit.errors import ProtocolError
from mcpkit.server import Context

server = Server("task-upstream", version="1.0.0")


class Name(BaseModel):
    name: str


@server.tool(task=True)
async def report(topic: str, ctx: Context) -> str:
    """A short task: two status messages, then the report."""
    await ctx.report_progress(1, 2, f"reading {topic}")
    await asyncio.sleep(0.05)
    await ctx.report_progress(2, 2, f"writing {topic}")
    return f"report on {topic}"


@server.tool(task="required")
async def forever(ctx: Context) -> str:
    """Runs until cancelled."""
    await ctx.report_progress(1, None, "waiting")
    await asyncio.Event().wait()
    return "never"


@server.tool(task=True)
async def greet(ctx: Context) -> str:
    """Asks the user's name inside the task."""
    answer = await ctx.elicit("Your name?", Name)
    return f"hello {answer.data.name}" if answer.data is not None else "no name"


@server.tool(task=True)
def broken() -> str:
    """Fails with a JSON-RPC error: the task fails."""
    raise ProtocolError(-32042, "broken on purpose", {"why": "test"})


@server.tool()
def plain(x: int) -> int:
    """No task."""
    return x * 2


@server.tool()
async def ask(question: str, ctx: Context) -> str:
    """No task: asks the client's model."""
    answer = await ctx.sample(question)
    return f"the model said {answer.content.text}"  # type: ignore[union-attr]


@server.tool()
async def steps(ctx: Context) -> str:
    """No task: three progress reports."""
    for step in (1, 2, 3):
        await ctx.report_progress(step, 3, f"step {step}")
    return "done"


if __name__ == "__main__":
    server.run()
