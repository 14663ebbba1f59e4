"""A stdio server (mcpkit) for the gateway tests: a tool that samples the client's model, one
that adds a tool (list_changed), one to deny, one that never answers and one that exits
at once (a crash)."""

import asyncio
import os

from mcpkit import Context, Server

server = Server("gateway-upstream")


@server.tool()
async def echo(text: str, ctx: Context) -> str:
    await ctx.info(f"echoing {text}")
    return f"echo {text}"


@server.tool()
def touch() -> str:
    server.resources.notify_updated("note://local/readme")
    return "touched"


@server.tool()
def secret() -> str:
    return "not for the gateway's clients"


@server.tool()
async def ask(question: str, ctx: Context) -> str:
    """Asks the client's model."""
    answer = await ctx.sample(question, max_tokens=10)
    return f"model said {answer.content.text}"  # type: ignore[union-attr]


@server.tool()
def grow() -> str:
    server.add_tool(lambda: "new", name="grown")
    return "grown"


@server.tool()
async def hang() -> str:
    await asyncio.Event().wait()  # never answers
    return "never"


@server.tool()
def die() -> str:
    os._exit(3)


@server.tool()
def forget() -> str:
    """Stop offering the readme (the gateway's routing table must follow)."""
    server.remove_resource("note://local/readme")
    return "forgotten"


@server.resource("note://local/readme")
def readme() -> str:
    return "the upstream's readme"


if __name__ == "__main__":
    server.run()
