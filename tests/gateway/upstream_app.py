"""An mcpkit server used as the proxy's upstream (in process, or `python upstream_app.py
[http PORT]`): every forwarded feature, and a record of what reached it."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from mcpkit import Server
from mcpkit.server import Context

server = Server("upstream", version="1.2.3", instructions="Use add to add.")
seen: dict[str, Any] = {"meta": [], "eras": [], "hanging": 0, "cancelled": 0}


@server.tool()
async def add(a: int, b: int, ctx: Context) -> int:
    """Add two numbers, reporting progress and logging."""
    seen["meta"].append(ctx.params.get("_meta"))
    seen["eras"].append(str(ctx.era))
    await ctx.report_progress(1, 2, "half")
    await ctx.report_progress(2, 2, "done")
    await ctx.info(f"adding {a} and {b}")
    return a + b


@server.tool()
def fail() -> str:
    """Always fails: a tool error."""
    raise RuntimeError("failed on purpose")


@server.tool()
async def ask_llm(question: str, ctx: Context) -> str:
    """Sampling through the proxy."""
    answer = await ctx.sample(question)
    return str(answer.content.text)  # type: ignore[union-attr]


@server.tool()
async def ask_user(ctx: Context) -> str:
    """Elicitation through the proxy."""
    schema = {"type": "object", "properties": {"name": {"type": "string"}}}
    answer = await ctx.elicit("Your name?", schema)
    return f"{answer.action}:{(answer.data or {}).get('name')}"


@server.tool()
async def roots(ctx: Context) -> list[str]:
    """roots/list through the proxy."""
    return [str(root.uri) for root in await ctx.list_roots()]


@server.tool()
async def hang(ctx: Context) -> str:
    """Waits until cancelled (counts the cancellation)."""
    seen["hanging"] += 1
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        seen["cancelled"] += 1
        raise
    return "never"


@server.tool()
def touch(uri: str) -> str:
    """Tells subscribers `uri` changed."""
    server.resources.notify_updated(uri)
    return "touched"


@server.tool()
def grow() -> str:
    """Adds a tool (list_changed)."""
    server.add_tool(lambda: "new", name=f"new{len(server.tools)}")
    return "grown"


@server.tool()
def touch_tools(ctx: Context) -> str:
    """Tells the caller's session only that the tool list changed, as servers whose list
    changes are per session do (the official SDK's)."""
    ctx.peer.notify("notifications/tools/list_changed")
    return "touched"


@server.resource("memo://readme")
def readme() -> str:
    return "read me"


@server.resource("memo://notes/{topic}")
def note(topic: str) -> str:
    return f"notes about {topic}"


@server.prompt()
def review(code: str) -> str:
    """Review code."""
    return f"Review: {code}"


@server.completion("ref/prompt", "review", "code")
def code_choices(argument: str, value: str, context: dict[str, str]) -> list[str]:
    return [c for c in ("print", "pass", "raise") if c.startswith(value)]


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        server.run("http", port=int(sys.argv[2]))
    else:
        server.run()
