"""The upstream of tests/gateway/test_gateway_workers.py: a server with per-session state.

`python workers_upstream.py PORT` serves it over Streamable HTTP (one process), counting the
`initialize` POSTs and the DELETEs it receives; `python workers_upstream.py` serves it on
stdio (one process per proxy worker and downstream session)."""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

from mcpkit import Server
from mcpkit.server import Context

server = Server("workers-upstream", version="1.0.0")
memory: dict[Any, str] = {}  # per upstream session (its Peer)
counts = {"initialize": 0, "delete": 0}


@server.tool()
def remember(value: str, ctx: Context) -> str:
    """Keep `value` in this upstream session."""
    memory[ctx.peer] = value
    return "kept"


@server.tool()
def recall(ctx: Context) -> str:
    """What this upstream session keeps."""
    return memory.get(ctx.peer, "")


@server.tool()
async def recall_later(ctx: Context) -> str:
    """What this upstream session keeps, a moment later (calls overlap)."""
    await asyncio.sleep(0.2)
    return memory.get(ctx.peer, "")


@server.tool()
async def ask(question: str, ctx: Context) -> str:
    """Sampling: the client's model answers."""
    answer = await ctx.sample(question)
    return str(answer.content.text)  # type: ignore[union-attr]


@server.tool()
def grow(name: str) -> str:
    """Add a tool: every session's list changes (notifications/tools/list_changed)."""
    server.tool(name=name)(lambda: name)
    return "grown"


@server.tool()
def stats() -> dict[str, int]:
    """Handshakes and DELETEs received over HTTP, sessions open, this process's id."""
    return {**counts, "live": len(server.sessions()), "pid": os.getpid()}


def counting(app: Any) -> Any:
    """`app`, counting `initialize` POSTs (no session id yet) and DELETEs."""

    async def wrapped(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = dict(scope["headers"])
            if scope["method"] == "DELETE":
                counts["delete"] += 1
            elif scope["method"] == "POST" and b"mcp-session-id" not in headers:
                version = headers.get(b"mcp-protocol-version", b"")
                if not version.startswith(b"2026"):  # a 2026-07-28 request has no session
                    counts["initialize"] += 1
        await app(scope, receive, send)

    return wrapped


if __name__ == "__main__":
    if len(sys.argv) > 1:
        import uvicorn

        app = counting(server.http_app())
        uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
    else:
        server.run()
