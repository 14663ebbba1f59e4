"""Helpers for testing an MCP server with pytest (or any asyncio test runner).

Connect a real `Client` to your `Server` in the same process -- no subprocess, no socket, the
same protocol core both ways -- and look at what it answers:

    from mcpkit.testing import connect, call, texts, tools_by_name

    async def test_add() -> None:
        async with connect(server) as client:
            assert texts(await call(client, "add", a=2, b=3)) == ["5"]
            assert "a" in (await tools_by_name(client))["add"]["inputSchema"]["properties"]

`connect(server, era="per-request")` talks the 2026-07-28 protocol (no handshake, an envelope
on every request) instead of the handshake era, so one test can check both. Results come
back as the wire dicts the server sent (what a client of any SDK sees); use the `Client`
methods for typed results.

This package is for users' tests (and mcpkit's own): nothing in mcpkit imports it.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any, Literal, Protocol, Unpack

from mcpkit.client import Client, ClientKeywords, Era
from mcpkit.server import Server

JSONObject = dict[str, Any]
# "handshake", "per-request" (the newest per-request revision) or one per-request revision;
# the old "legacy" still works for one release, with a DeprecationWarning.
EraChoice = Literal["handshake", "per-request", "2026-07-28"]

__all__ = ["call", "connect", "texts", "tools_by_name"]


class WireModel(Protocol):
    """A typed result from `mcpkit.types`, which gives back its wire form."""

    def to_wire(self) -> JSONObject: ...


@contextlib.asynccontextmanager
async def connect(
    server: Server, *, era: EraChoice | Era = Era.HANDSHAKE, **options: Unpack[ClientKeywords]
) -> AsyncIterator[Client]:
    """A `Client` connected to `server` in this process (`options` go to `Client`: sampling,
    elicitation, roots, timeout, ...). `era`: "handshake" (the initialize handshake),
    "per-request" or a per-request revision such as "2026-07-28" (no handshake, an envelope
    on every request); the old "legacy" means "handshake" (deprecated). Raises ValueError for
    another `era`, TypeError for an unknown option (or `mode=`: say `era=`)."""
    if "mode" in options:
        raise TypeError("connect() chooses the era with era=, not mode=")
    options["mode"] = era
    async with Client(server, **options) as client:
        yield client


async def call(client: Client, tool: str, /, **arguments: Any) -> JSONObject:
    """Call `tool` with `arguments`; the `CallToolResult` as the server sent it (a dict).

    A tool that fails reports it in the result (`isError`); a protocol error (an unknown
    tool, bad arguments before 2025-11-25) raises `mcpkit.errors.ProtocolError`.
    """
    return await client.request("tools/call", {"name": tool, "arguments": arguments})


async def tools_by_name(client: Client) -> dict[str, JSONObject]:
    """Every tool the server lists (all pages), as sent, by name."""
    tools: dict[str, JSONObject] = {}
    cursor: str | None = None
    while True:
        page = await client.request("tools/list", {"cursor": cursor} if cursor else None)
        tools.update((tool["name"], tool) for tool in page["tools"])
        cursor = page.get("nextCursor")
        if not cursor:
            return tools


def texts(result: JSONObject | WireModel) -> list[str]:
    """The text of every text item of a result, in order: the `content` of a tool result,
    the messages of a prompt, the `contents` of a read resource. Takes the wire dict or a
    typed result from `mcpkit.types`."""
    if not isinstance(result, dict):
        result = result.to_wire()
    if "messages" in result:
        items = [message["content"] for message in result["messages"]]
    else:
        items = result.get("content") or result.get("contents") or []
    return [item["text"] for item in items if isinstance(item.get("text"), str)]
