"""A stdio server whose texts carry bidi controls: U+202E (right-to-left override) in its
name, a tool's description and a log line, which would reverse whatever the page shows after
them if they were applied, and Hebrew in a tool's title."""

from __future__ import annotations

from mcpkit import Context, Server

RLO = "\u202e"
server = Server(f"evil{RLO}name", version="1.0.0")


@server.tool(title="\u05e9\u05dc\u05d5\u05dd 1, 2", description=f"Echo{RLO} then (more)")
async def echo(text: str, ctx: Context) -> str:
    """(description above)"""
    await ctx.warning(f"log{RLO} line (after)")
    return f"{RLO}{text}"


if __name__ == "__main__":
    server.run()
