"""A stdio server with what a day of inspecting real servers brings (test_daily_browser.py):
a recursive input schema (`tree(root: Node)`, `Node` holding an Optional `Node`: the
`$defs` + `$ref` shape of pydantic, as the official SDK and FastMCP send it), arguments with
titles, a description and a log line far too long to show whole, an app-only tool and a tool
with an MCP Apps view."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field

from mcpkit import Context, Server

server = Server("daily", version="1.0.0")
LONG = "A long description. " * 12_000  # a real server's pasted manual: ~240,000 characters


class Node(BaseModel):
    value: str
    child: Node | None = None


def depth(node: Node | None) -> int:
    return 0 if node is None else 1 + depth(node.child)


@server.tool()
def tree(root: Node) -> str:
    """Count the nodes of a chain."""
    return f"{root.value}: depth {depth(root)}"


@server.tool()
def titled(
    seconds_per_stage: Annotated[float, Field(title="Seconds per stage")] = 1.0,
    plain: str = "",
) -> str:
    """Arguments whose schema has titles."""
    return f"{seconds_per_stage} {plain}"


@server.tool(description=LONG)
async def chatty(ctx: Context) -> str:
    await ctx.warning("a long log line. " * 12_000)
    return "logged"


@server.app("ui://daily/view")
def daily_view() -> str:
    """A view (never rendered by these tests)."""
    return "<!doctype html><p>view</p>"


@server.tool(app="ui://daily/view")
def with_view() -> str:
    """A tool whose results render in a view."""
    return "shown"


@server.tool(visibility=["app"])
def app_only() -> str:
    """Called by the view only, never by a model."""
    return "app"


if __name__ == "__main__":
    server.run()
