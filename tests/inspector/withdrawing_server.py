"""A stdio server that withdraws a question: `ask` elicits and waits; `withdraw` cancels that
elicitation (the server sends notifications/cancelled for it) and `ask` answers "withdrawn"."""

from __future__ import annotations

import asyncio

from mcpkit import Server
from mcpkit.server import Context

server = Server("withdrawing", version="1.0.0")
waiting: list[asyncio.Task[object]] = []


@server.tool()
async def ask(ctx: Context) -> str:
    """Ask the user something and wait."""
    question = asyncio.ensure_future(ctx.elicit("Anything?", {"type": "object", "properties": {}}))
    waiting.append(question)
    try:
        await question
    except asyncio.CancelledError:
        return "withdrawn"
    return "answered"


@server.tool()
async def withdraw() -> int:
    """Cancel the questions `ask` is waiting on."""
    for question in waiting:
        question.cancel()
    return len(waiting)


if __name__ == "__main__":
    server.run()
