"""An official SDK (`mcp==2.3.0`) server for the HTTP client tests, served by `servers.serving`."""

from __future__ import annotations

import asyncio
from typing import Any

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("official-http", version="2.3.0")
_background: set[asyncio.Task[Any]] = set()


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool()
async def slow(seconds: float) -> str:
    """Sleep, then answer."""
    await asyncio.sleep(seconds)
    return "done"


@server.tool()
async def chatty(ctx: Context, steps: int) -> str:
    """Report progress on the request's stream before answering."""
    for step in range(steps):
        await ctx.report_progress(step + 1, steps)
    return "chatted"


@server.tool()
async def later(ctx: Context) -> str:
    """Answer now; a moment later say the tool list changed (an unrelated message: GET stream)."""
    session = ctx.session

    async def announce() -> None:
        await asyncio.sleep(0.1)
        await session.send_tool_list_changed()

    task = asyncio.get_running_loop().create_task(announce())
    _background.add(task)
    task.add_done_callback(_background.discard)
    return "soon"


def streamable(*, json_response: bool = False, stateless: bool = False) -> Any:
    return server.streamable_http_app(json_response=json_response, stateless_http=stateless)


def legacy() -> Any:
    return server.sse_app()
