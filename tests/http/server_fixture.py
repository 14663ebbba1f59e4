"""An mcpkit server for the HTTP server tests: quick, chatty, slow and asking tools."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from mcpkit import Server
from mcpkit.protocol.sse import SSEEvent, SSEParser
from mcpkit.server import Context

ACCEPT_BOTH = "application/json, text/event-stream"
HEADERS = {"accept": ACCEPT_BOTH, "content-type": "application/json"}
slow_finished: list[str] = []


def make_server() -> Server:
    server = Server("http-fixture", version="1.0.0")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    @server.tool()
    async def chatty(steps: int, ctx: Context) -> str:
        """Progress before the answer (SSE)."""
        for step in range(1, steps + 1):
            await ctx.report_progress(step, steps)
            await asyncio.sleep(0)
        return "chatted"

    @server.tool()
    async def slow(seconds: float, tag: str = "") -> str:
        """Sleep, then answer."""
        await asyncio.sleep(seconds)
        slow_finished.append(tag)
        return "done"

    @server.tool()
    async def paced(ctx: Context, pause: float = 0.3) -> str:
        """Progress, a pause, more progress, the answer: time to lose the stream."""
        await ctx.report_progress(1, 2)
        await asyncio.sleep(pause)
        await ctx.report_progress(2, 2)
        return "paced"

    @server.tool()
    async def polled(ctx: Context) -> str:
        """Progress, then the server closes the stream; the rest waits for a resume."""
        await ctx.report_progress(1, 2)
        await asyncio.sleep(0.05)
        ctx.close_sse_stream()
        await asyncio.sleep(0.2)
        await ctx.report_progress(2, 2)
        return "polled"

    @server.tool()
    async def ask(ctx: Context) -> str:
        """A server->client request on the request's stream."""
        roots = await ctx.list_roots()
        return f"{len(roots)} roots"

    @server.tool()
    def grow(tool_name: str) -> str:
        """Register a tool: list_changed goes to the GET stream (unrelated)."""
        server.add_tool(lambda: "x", name=tool_name)
        return "grown"

    return server


def initialize_body(
    version: str = "2025-11-25", request_id: int = 1, **caps: Any
) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": caps,
            "clientInfo": {"name": "raw", "version": "1"},
        },
    }


async def open_session(
    client: httpx.AsyncClient, version: str = "2025-11-25", **caps: Any
) -> dict[str, str]:
    """Initialize over raw HTTP; returns the headers later requests carry."""
    answer = await client.post("/mcp", headers=HEADERS, json=initialize_body(version, **caps))
    assert answer.status_code == 200, answer.text
    headers = {
        **HEADERS,
        "mcp-session-id": answer.headers["mcp-session-id"],
        "mcp-protocol-version": version,
    }
    done = await client.post(
        "/mcp", headers=headers, json={"jsonrpc": "2.0", "method": "notifications/initialized"}
    )
    assert done.status_code == 202 and done.content == b""
    return headers


def call(name: str, request_id: int | str = 2, token: Any = None, **arguments: Any) -> dict:
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if token is not None:
        params["_meta"] = {"progressToken": token}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


async def read_events(response: httpx.Response, count: int | None = None) -> list[SSEEvent]:
    """SSE events of a streamed response: all the rest, or the next `count`. May be called
    again on the same response to read further."""
    state = response.extensions.setdefault("mcp_reader", {})
    if not state:
        state["chunks"] = response.aiter_bytes()
        state["parser"] = SSEParser()
        state["backlog"] = []
    backlog: list[SSEEvent] = state["backlog"]
    while count is None or len(backlog) < count:
        try:
            chunk = await state["chunks"].__anext__()
        except StopAsyncIteration:
            break
        backlog.extend(state["parser"].feed(chunk))
    taken = backlog[:count] if count is not None else list(backlog)
    del backlog[: len(taken)]
    return taken
