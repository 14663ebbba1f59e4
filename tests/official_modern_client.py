"""The official SDK's client (`mcp` 2.3.0) set up for the two-era interop tests.

`mcp.Client(target, mode=...)` picks the era: "auto" probes `server/discover` at 2026-07-28
and falls back to `initialize`; "2026-07-28" adopts that revision without a probe; "legacy"
runs the `initialize` handshake (it offers 2025-11-25). The same elicitation, sampling and
roots callbacks answer real server->client requests (handshake era, `context.request_id` is
the JSON-RPC id the server picked) and the `inputRequests` of an `input_required` result
(2026-07-28, `context.request_id` is the server's key for the ask, e.g. "elicit-1").
`Asked` records every call so a test can tell which path was taken.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from mcp import Client, types
from mcp.client.session import ClientRequestContext

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
ERA_OF_MODE = {"auto": MODERN, MODERN: MODERN, "legacy": LEGACY}  # the era each mode reaches
ROOTS = ["file:///work/alpha", "file:///work/beta"]
LANDMARK = "Torre de Belém"
TRIP = {"city": "Lisbon", "nights": 3}


@dataclass
class Asked:
    """What the official client was asked, in order: (kind, request id, detail).

    `before_elicit_answer`, when set, is awaited before answering an elicitation (to hold a
    client mid-ask)."""

    calls: list[tuple[str, Any, Any]] = field(default_factory=list)
    before_elicit_answer: Callable[[], Awaitable[Any]] | None = None

    async def elicit(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestFormParams)
        self.calls.append(("elicit", context.request_id, params.requested_schema))
        if self.before_elicit_answer is not None:
            await self.before_elicit_answer()
        return types.ElicitResult(action="accept", content=dict(TRIP))

    async def sample(
        self, context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        prompt = params.messages[0].content
        assert isinstance(prompt, types.TextContent)
        self.calls.append(("sample", context.request_id, prompt.text))
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=LANDMARK),
            model="interop-model",
            stop_reason="endTurn",
        )

    async def roots(self, context: ClientRequestContext) -> types.ListRootsResult:
        self.calls.append(("roots", context.request_id, None))
        return types.ListRootsResult(
            roots=[types.Root(uri=uri, name=uri.rsplit("/", 1)[1]) for uri in ROOTS]  # type: ignore[arg-type]
        )

    def kinds(self) -> list[str]:
        return [kind for kind, _, _ in self.calls]

    def request_ids(self) -> list[Any]:
        return [request_id for _, request_id, _ in self.calls]


def official_client(target: Any, mode: str, asked: Asked | None = None) -> Client:
    """An official client in `mode`, answering asks through `asked` when given."""
    if asked is None:
        return Client(target, mode=mode)
    return Client(
        target,
        mode=mode,
        elicitation_callback=asked.elicit,
        sampling_callback=asked.sample,
        list_roots_callback=asked.roots,
    )


async def say_the_word(
    context: ClientRequestContext, params: types.ElicitRequestParams
) -> types.ElicitResult:
    """An elicitation callback for `parrot`: answers "Say WORD ..." with WORD, after a pause
    that lets concurrent calls interleave."""
    await asyncio.sleep(0.01)
    return types.ElicitResult(action="accept", content={"word": params.message.split()[1]})


async def listeners(client: Client, expected: int) -> int:
    """The server's count of open subscriptions, once it is `expected` (or after 1 s)."""
    for _ in range(50):
        count = (await client.call_tool("listeners", {})).structured_content
        assert count is not None
        if count["result"] == expected:
            break
        await asyncio.sleep(0.02)
    return int(count["result"])


async def check_subscription_ends_both_ways(client: Client) -> None:
    """Leaving `listen()` ends the server's subscription (the official client cancels it);
    the server ending it gracefully ends the official client's loop, without an error."""
    assert await listeners(client, 0) == 0
    async with client.listen(tools_list_changed=True) as sub:
        assert await listeners(client, 1) == 1
    assert await listeners(client, 0) == 0

    async with client.listen(tools_list_changed=True) as sub:

        async def drain() -> list[Any]:
            return [event async for event in sub]

        consumer = asyncio.create_task(drain())
        ended = await client.call_tool("end_subscriptions", {})
        assert ended.structured_content == {"result": 1}
        assert await asyncio.wait_for(consumer, 5) == []
    assert await listeners(client, 0) == 0
