"""Run by FastMCP's interpreter (tests/peers.py: fastmcp_python): FastMCP 4.1.6's client runs a
whole session on URL (haproxy in front of the scale-out workers) and prints what it saw as one
JSON object, for tests/scaleout/test_peer_clients.py to assert on.

    python fastmcp_client.py URL MODE URI TOOL

MODE is FastMCP's `mode`: "legacy" (the initialize handshake) or "auto" (it probes
`server/discover` and speaks 2026-07-28 with a server that answers it). URI is the resource
to watch, TOOL the name of the tool to add at run time (both unique per test)."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import httpx2
import mcp_types
from fastmcp import Client
from fastmcp.client.transports import StreamableHttpTransport
from mcp.client.subscriptions import listen
from peer_traffic import Traffic

WAIT = 15.0  # bound on waiting for a notification (a loaded 2-core machine)


class Inbox:
    def __init__(self) -> None:
        self.updated: asyncio.Queue[str] = asyncio.Queue()
        self.tools_changed: asyncio.Queue[None] = asyncio.Queue()
        self.logs: list[list[Any]] = []
        self.progress: list[float] = []

    async def on_message(self, message: Any) -> None:
        if isinstance(message, mcp_types.ResourceUpdatedNotification):
            self.updated.put_nowait(str(message.params.uri))
        elif isinstance(message, mcp_types.ToolListChangedNotification):
            self.tools_changed.put_nowait(None)

    async def on_log(self, params: mcp_types.LoggingMessageNotificationParams) -> None:
        self.logs.append([params.level, params.data])

    async def on_progress(self, value: float, total: float | None, message: str | None) -> None:
        self.progress.append(value)


async def sample(messages: Any, params: Any, context: Any) -> str:
    return "fastmcp says hi"


async def elicit(message: str, response_type: Any, params: Any, context: Any) -> dict[str, Any]:
    if message == "Your order?":
        return {"item": "tea", "count": 2, "size": "large", "gift": True}
    return {"go": True}


def text(result: Any) -> str:
    return str(result.content[0].text)


async def main(url: str, mode: str, uri: str, tool: str) -> dict[str, Any]:
    traffic, inbox = Traffic(), Inbox()

    def http_client(**kwargs: Any) -> httpx2.AsyncClient:
        return traffic.client(**kwargs)

    client = Client(
        StreamableHttpTransport(url, httpx_client_factory=http_client),
        mode=mode,  # type: ignore[arg-type]
        sampling_handler=sample,
        elicitation_handler=elicit,
        log_handler=inbox.on_log,
        message_handler=inbox.on_message,
        timeout=30,
    )
    seen: dict[str, Any] = {"uri": uri}
    async with client:
        seen["protocol"] = client.protocol_version
        seen["tools"] = sorted(t.name for t in await client.list_tools())
        seen["pids"] = [text(await client.call_tool("which_worker", {})) for _ in range(6)]
        steps = await client.call_tool("steps", {"count": 3}, progress_handler=inbox.on_progress)
        seen["steps"], seen["progress"] = text(steps), inbox.progress
        if mode == "legacy":
            await client.set_logging_level("warning")
        await client.call_tool("chatter", {})
        seen["logs"] = inbox.logs
        if mode == "legacy":
            seen["updates"] = await legacy_updates(client, traffic, inbox, uri, tool)
        else:
            seen["updates"] = await listened_updates(client, traffic, uri, tool)
        seen["asked"] = [
            await round_trip(client, traffic, name) for name in ["ask", "confirm", "ask_form"]
        ]
    seen["traffic"], seen["session_id"] = traffic.as_json(), traffic.session_id
    return seen


async def legacy_updates(
    client: Client, traffic: Traffic, inbox: Inbox, uri: str, tool: str
) -> dict[str, Any]:
    """Subscribe, then `touch` until one lands on a worker other than the GET stream's; add a
    tool. What arrived, and where each touch was made."""
    await client.session.subscribe_resource(uri)
    await asyncio.wait_for(traffic.get_open.wait(), WAIT)
    listener, touched, received = traffic.get_worker(), [], []
    for _ in range(6):
        await client.call_tool("touch", {"uri": uri})
        touched.append(traffic.last("tools/call").worker)
        received.append(await asyncio.wait_for(inbox.updated.get(), WAIT))
        if touched[-1] != listener:
            break
    await client.call_tool("add_tool", {"name": tool})
    await asyncio.wait_for(inbox.tools_changed.get(), WAIT)
    extra = inbox.updated.qsize()
    return {"listener": listener, "touched": touched, "received": received, "extra": extra}


async def listened_updates(client: Client, traffic: Traffic, uri: str, tool: str) -> dict[str, Any]:
    """2026-07-28: FastMCP has no API for `subscriptions/listen`; its SDK session's `listen`
    opens one; a `touch` and an `add_tool` reach it. What arrived, and where each was made."""
    received: list[str] = []
    made: list[str] = []
    async with listen(
        client.session, tools_list_changed=True, resource_subscriptions=[uri]
    ) as subscription:
        listener = traffic.last("subscriptions/listen").worker
        events = aiter(subscription)
        for name, arguments in [("touch", {"uri": uri}), ("add_tool", {"name": tool})]:
            await client.call_tool(name, arguments)
            made.append(traffic.last("tools/call").worker)
            event = await asyncio.wait_for(anext(events), WAIT)
            received.append(type(event).__name__)
    honored = subscription.honored.model_dump(exclude_none=True)
    return {"listener": listener, "made": made, "received": received, "honored": honored}


async def round_trip(client: Client, traffic: Traffic, tool: str) -> dict[str, Any]:
    """Call `tool`, which asks the client something mid-call; the result and the workers."""
    before = len(traffic.exchanges)
    result = await client.call_tool(tool, {})
    during = traffic.exchanges[before:]
    return {"text": text(result), "exchanges": [[e.verb, e.kind, e.worker] for e in during]}


print(json.dumps(asyncio.run(main(*sys.argv[1:5]))))
