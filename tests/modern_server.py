"""An mcpkit server for the two-era interop tests with the official SDK's client.

`python tests/modern_server.py` serves it over stdio; the HTTP tests import `make_server()`.
Its handlers report what they saw (`ctx.protocol_version`, `ctx.era`), so a test can tell
which era the official client spoke from our side. The asking handlers (`interview`,
`interview_at_once`, the `plan` prompt, the `workspace://roots` resource) are the same code in
both eras: real server->client requests for a handshake client, `input_required` rounds for
a 2026-07-28 client. `runs` counts how many times each asking handler started (a 2026-07-28
request runs its handler again on every round).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass
from typing import Annotated, Any

from mcpkit import Era, Server
from mcpkit.server import Context
from mcpkit.server.schema import Header


@dataclass
class Seen:
    protocol_version: str | None
    modern: bool
    client_name: str | None


@dataclass
class Trip:
    city: str
    nights: int


@dataclass
class Interview:
    action: str
    city: str
    nights: int
    landmark: str
    roots: list[str]
    protocol_version: str | None


@dataclass
class Said:
    word: str


WEATHER_TOOL = {
    "name": "get_weather",
    "description": "Today's weather in a city.",
    "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}},
}


def seen(ctx: Context) -> Seen:
    return Seen(ctx.protocol_version, ctx.era is Era.PER_REQUEST, ctx.client_info.get("name"))


def interviewed(answer: Any, reply: Any, roots: list[Any], ctx: Context) -> Interview:
    """The answers to the interview's three asks (elicitation, sampling, roots)."""
    trip = answer.data or Trip("nowhere", 0)
    return Interview(
        action=answer.action,
        city=trip.city,
        nights=trip.nights,
        landmark=reply.content.text,
        roots=[root.uri for root in roots],
        protocol_version=ctx.protocol_version,
    )


def make_server(**options: Any) -> Server:
    """The server; `options` go to `Server` (e.g. `cache=`)."""
    server = Server("modern-interop", version="2.0.0", **options)
    runs: Counter[str] = Counter()

    @server.tool()
    def whoami(ctx: Context) -> Seen:
        """What the server saw of this request."""
        return seen(ctx)

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool()
    def route(region: Annotated[str, Header("Region")], query: str) -> str:
        """Answer from a region; the region travels as the Mcp-Param-Region header too."""
        return f"{region}: {query}"

    @server.tool()
    async def book(region: Annotated[str, Header("Region")], ctx: Context) -> str:
        """Book a trip from a region, asking where to (a header parameter and an ask)."""
        answer = await ctx.elicit(f"Where to from {region}?", Trip)
        trip = answer.data or Trip("nowhere", 0)
        return f"{region} -> {trip.city}, {trip.nights} nights"

    @server.tool()
    def run_counts() -> dict[str, int]:
        """How many times each asking handler started."""
        return dict(runs)

    @server.tool()
    async def interview(ctx: Context) -> Interview:
        """Elicit a trip, sample a landmark, list roots: one ask after the other."""
        runs["interview"] += 1
        answer = await ctx.elicit("Where to?", Trip)
        trip = answer.data or Trip("nowhere", 0)
        reply = await ctx.sample(f"Name one landmark in {trip.city}.", max_tokens=20)
        roots = await ctx.list_roots()
        return interviewed(answer, reply, roots, ctx)

    @server.tool()
    async def forecast(city: str, ctx: Context) -> str:
        """Sample with a tool the model may call (needs the client's sampling.tools)."""
        reply = await ctx.sample(
            f"Weather in {city}?", max_tokens=50, tools=[WEATHER_TOOL], tool_choice={"mode": "auto"}
        )
        content = reply.to_wire()["content"]
        blocks = content if isinstance(content, list) else [content]
        used = [f"{block['type']} {block.get('name', block.get('text'))}" for block in blocks]
        return f"{', '.join(used)} ({reply.stop_reason})"

    @server.tool()
    async def interview_at_once(ctx: Context) -> Interview:
        """The same three asks, gathered into one round."""
        runs["interview_at_once"] += 1
        answer, reply, roots = await ctx.gather_input(
            ctx.elicit_request("Where to?", Trip),
            ctx.sample_request("Name one landmark.", max_tokens=20),
            ctx.roots_request(),
        )
        return interviewed(answer, reply, roots, ctx)

    @server.tool()
    async def steps(count: int, ctx: Context) -> str:
        """Report progress `count` times, logging each step, then answer."""
        for step in range(1, count + 1):
            await ctx.report_progress(step, count, f"step {step}")
            await ctx.info(f"did step {step}")
        return f"{count} steps"

    @server.tool()
    async def nap(seconds: float) -> str:
        """Sleep; a cancelled nap is counted in `run_counts` as "nap cancelled"."""
        runs["nap"] += 1
        try:
            await asyncio.sleep(seconds)
        except asyncio.CancelledError:
            runs["nap cancelled"] += 1
            raise
        return "rested"

    @server.tool()
    def grow(tool_name: str) -> str:
        """Register another tool (the tool list changes)."""
        server.add_tool(lambda: "grown", name=tool_name)
        return "grown"

    @server.tool()
    def touch(name: str) -> str:
        """Tell subscribers that note://{name} changed."""
        server.resources.notify_updated(f"note://{name}")
        return "touched"

    @server.tool()
    def listeners() -> int:
        """How many subscriptions/listen streams are open."""
        return len(server.subscriptions)

    @server.tool()
    def end_subscriptions() -> int:
        """End every subscription gracefully; how many there were."""
        return server.subscriptions.close_all()

    @server.tool()
    def fail(reason: str) -> str:
        """Raise: a tool execution error."""
        raise RuntimeError(reason)

    @server.completion("ref/prompt", "review", "code")
    def complete_code(argument: str, value: str, context: dict[str, str]) -> list[str]:
        return [c for c in ("print(1)", "pass", "import os") if c.startswith(value)]

    @server.tool()
    async def parrot(word: str, ctx: Context) -> str:
        """Ask the user to say `word`, twice; answer with what they said."""
        first = await ctx.elicit(f"Say {word}", Said)
        again = await ctx.elicit(f"Say {word} again", Said)
        return f"{first.data.word if first.data else '-'} {again.data.word if again.data else '-'}"

    @server.resource("note://{name}")
    def note(name: str, ctx: Context) -> str:
        """A note, signed with the protocol version the server saw."""
        return f"note {name} at {ctx.protocol_version}"

    @server.resource("workspace://roots")
    async def workspace(ctx: Context) -> str:
        """The client's roots, asked for while reading."""
        runs["workspace"] += 1
        roots = await ctx.list_roots()
        return " ".join(root.uri for root in roots)

    @server.prompt()
    def review(code: str, ctx: Context) -> str:
        """Review some code."""
        return f"Review this ({ctx.protocol_version}): {code}"

    @server.prompt(name="grüße")
    def greeting(name: str) -> str:
        """A prompt whose name is not ASCII (its Mcp-Name header is base64-encoded)."""
        return f"Grüß {name}!"

    @server.prompt()
    async def plan(ctx: Context) -> str:
        """A travel plan prompt that asks the user where to first."""
        runs["plan"] += 1
        answer = await ctx.elicit("Where to?", Trip)
        trip = answer.data or Trip("nowhere", 0)
        return f"Plan {trip.nights} nights in {trip.city}."

    return server


if __name__ == "__main__":
    make_server().run()
