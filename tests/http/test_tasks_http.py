"""Tasks over real Streamable HTTP (uvicorn on 127.0.0.1), both eras: a question asked inside
a task reaches the client (2025-11-25: on the stream of the waiting tasks/result; 2026-07-28:
inputRequests answered by tasks/update), a task outlives the client that started it and is
picked up by another one, and with authorization a task belongs to its principal."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

from mcpkit import Client, Server
from mcpkit.auth import BearerAuth, StaticTokenVerifier
from mcpkit.client import HTTPOptions
from mcpkit.errors import ProtocolError
from mcpkit.runtime.principal import Principal
from mcpkit.server import Context
from tests.http.servers import serving, unused_port

PEOPLE = {
    "alice-token-0123456789": Principal("alice", "app", frozenset({"mcp"})),
    "bob-token-0123456789": Principal("bob", "app", frozenset({"mcp"})),
}
CONFIRM = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


def task_server() -> Server:
    server = Server("http-tasks")

    @server.tool(task=True)
    async def build(steps: int, ctx: Context) -> str:
        for step in range(steps):
            await ctx.report_progress(step + 1, steps, f"step {step + 1} of {steps}")
            await asyncio.sleep(0.05)
        answer = await ctx.elicit("Ship it?", CONFIRM)
        return f"built {steps}, ship={(answer.data or {}).get('ok')}"

    @server.tool(task=True)
    async def wait(seconds: float) -> str:
        await asyncio.sleep(seconds)
        return "waited"

    return server


@contextlib.asynccontextmanager
async def served(auth: bool = False) -> AsyncIterator[str]:
    port = unused_port()
    options: dict[str, Any] = {}
    if auth:
        options["auth"] = BearerAuth(
            StaticTokenVerifier(PEOPLE), resource=f"http://127.0.0.1:{port}/mcp"
        )
    async with serving(task_server().http_app(**options), port) as base:
        yield f"{base}/mcp"


async def accept(request: Any) -> dict[str, Any]:
    return {"action": "accept", "content": {"ok": True}}


@pytest.mark.parametrize("mode", ["handshake", "2026-07-28"])
async def test_a_task_asks_its_question_over_http_and_finishes(mode: str) -> None:
    async with served() as url, Client(url, mode=mode, elicitation=accept) as client:
        handle = await client.start_tool("build", {"steps": 3})
        messages = [state.status_message async for state in handle]
        assert "step 3 of 3" in messages or "step 2 of 3" in messages
        result = await handle.result()
        assert result.content[0].text == "built 3, ship=True"


async def test_call_tool_over_modern_http_returns_the_final_result() -> None:
    async with served() as url, Client(url, mode="2026-07-28", elicitation=accept) as client:
        result = await client.call_tool("build", {"steps": 1})
        assert result.content[0].text == "built 1, ship=True"  # type: ignore[union-attr]


async def test_a_modern_task_outlives_its_client_and_another_client_collects_it() -> None:
    async with served() as url:
        async with Client(url, mode="2026-07-28") as first:
            handle = await first.start_tool("wait", {"seconds": 0.3})
            task_id = handle.task_id
        # the first client is gone (a restart, another process): the task is not
        async with Client(url, mode="2026-07-28") as second:
            result = await second.task(task_id).result()
            assert result.content[0].text == "waited"


@pytest.mark.parametrize("mode", ["handshake", "2026-07-28"])
async def test_with_authorization_a_task_belongs_to_its_principal(mode: str) -> None:
    def as_(token: str) -> Client:
        headers = {"authorization": f"Bearer {token}"}
        return Client(url, mode=mode, http=HTTPOptions(headers=headers))

    async with served(auth=True) as url, as_("alice-token-0123456789") as alice:
        handle = await alice.start_tool("wait", {"seconds": 0.2})
        async with as_("bob-token-0123456789") as bob:
            with pytest.raises(ProtocolError) as refused:
                await bob.task(handle.task_id).status()
            assert refused.value.code == -32602 and "not found" in refused.value.message
            with pytest.raises(ProtocolError):
                await bob.task(handle.task_id).cancel()
        # the same principal in a new client (session) may collect it
        async with as_("alice-token-0123456789") as again:
            result = await again.task(handle.task_id).result()
            assert result.content[0].text == "waited"
