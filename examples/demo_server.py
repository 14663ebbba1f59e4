"""A demo MCP server using every server feature of mcpkit.

python examples/demo_server.py            # stdio
mcpkit run examples/demo_server.py        # the same, through the command line
mcpkit list examples/demo_server.py --resources --templates --prompts
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from mcpkit import AssistantMessage, Context, Image, Server, UserMessage

HERE = Path(__file__).resolve().parent
PIXEL = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
    "0000000d49444154789c63f8cfc0f01f0005000201a5b1f1b40000000049454e44ae426082"
)


@contextlib.asynccontextmanager
async def lifespan(server: Server) -> AsyncIterator[dict[str, int]]:
    """Entered once around the server's life: open connections here, close them after."""
    yield {"visits": 0}


server = Server(
    "demo",
    version="1.0.0",
    instructions="Arithmetic, greetings, a notes store and a code-review prompt.",
    lifespan=lifespan,
)


# -- tools -----------------------------------------------------------------------------------


@server.tool(annotations={"readOnlyHint": True, "idempotentHint": True})
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def greet(name: str, punctuation: str = "!") -> str:
    """Greet someone by name.

    Args:
        name: Who to greet.
        punctuation: What ends the greeting.
    """
    return f"Hello, {name}{punctuation}"


@server.tool()
async def countdown(start: int, ctx: Context) -> list[str]:
    """Count down to zero, reporting progress and logging each step."""
    steps = []
    for done, number in enumerate(range(start, -1, -1), start=1):
        steps.append(str(number))
        await ctx.report_progress(done, start + 1, f"at {number}")
        await ctx.debug(f"counted {number}")
        await asyncio.sleep(0)
    return steps


class Stats(BaseModel):
    count: int
    mean: float
    largest: float


@server.tool()
def statistics(values: list[float]) -> Stats:
    """Summarize numbers (structured output with an outputSchema)."""
    if not values:
        raise ValueError("give at least one value")
    return Stats(count=len(values), mean=sum(values) / len(values), largest=max(values))


@server.tool()
def pixel() -> Image:
    """A 1x1 PNG image."""
    return Image(PIXEL, mime_type="image/png")


@server.tool()
async def visit(ctx: Context) -> int:
    """Count visits in the lifespan state."""
    ctx.lifespan["visits"] += 1
    return int(ctx.lifespan["visits"])


@server.tool()
async def ask_model(question: str, ctx: Context) -> str:
    """Ask the client's model (sampling); fails clearly if the client cannot sample."""
    reply = await ctx.sample(question, max_tokens=200)
    return str(getattr(reply.content, "text", ""))  # text, or nothing for other content


class Confirmation(BaseModel):
    confirm: bool
    note: str = ""


@server.tool()
async def confirm(action: str, ctx: Context) -> str:
    """Ask the user to confirm an action (form elicitation with a typed answer)."""
    answer = await ctx.elicit(f"Really {action}?", Confirmation)
    if answer.action != "accept" or answer.data is None:
        return f"not confirmed ({answer.action})"
    return f"confirmed: {answer.data.confirm} {answer.data.note}".strip()


@server.tool()
async def roots(ctx: Context) -> list[str]:
    """The client's roots."""
    return [root.uri for root in await ctx.list_roots()]


# -- resources -------------------------------------------------------------------------------

NOTES = {"welcome": "Welcome to mcpkit.", "todo": "Write more tests."}
server.add_resource("demo://readme", "This server demonstrates every feature.")
server.add_resource("examples://", HERE)


@server.resource("notes://{name}", mime_type="text/plain")
def note(name: str) -> str | None:
    """A note by name (None means not found)."""
    return NOTES.get(name)


@server.tool()
def write_note(name: str, text: str) -> str:
    """Create or replace a note; subscribers of notes://NAME hear about it."""
    NOTES[name] = text
    server.resources.notify_updated(f"notes://{name}")
    return f"saved notes://{name}"


# -- prompts and completion ------------------------------------------------------------------


@server.prompt()
def review(code: str, language: Literal["python", "rust", "go"] = "python") -> list[object]:
    """Ask for a code review.

    Args:
        code: The code to review.
        language: Its language (completed automatically from the allowed values).
    """
    return [
        UserMessage(f"Please review this {language} code:\n\n{code}"),
        AssistantMessage("I will look for bugs first, then style."),
    ]


@server.completion("ref/resource", "notes://{name}")
def note_names(argument: str, value: str, context: dict[str, str]) -> list[str]:
    return [name for name in NOTES if name.startswith(value)]


if __name__ == "__main__":
    server.run()
