"""Peer clients run whole sessions through haproxy (round robin, no stickiness) in front of 2
and 3 workers sharing Redis: the official SDK's client (`mcp`, handshake era) and FastMCP
4.1.6's client (its own venv, tests/scaleout/fastmcp_client.py run as a subprocess; handshake
era and 2026-07-28). Which worker answered each exchange is read from haproxy's `X-Worker`
header by the client's own HTTP client (tests/scaleout/peer_traffic.py)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import ClientSession, types
from mcp.client.session import ClientRequestContext
from mcp.client.streamable_http import streamable_http_client

from tests.scaleout.conftest import Cluster
from tests.scaleout.peer_traffic import Traffic

HERE = Path(__file__).resolve().parent
FASTMCP_CLIENT = HERE / "fastmcp_client.py"
WAIT = 15.0  # bound on waiting for a notification (a loaded 2-core machine)

# The SDK warns that logging is deprecated from 2026-07-28 on; these sessions are 2025-11-25.
pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")


@pytest.fixture(params=["cluster", "cluster3"])
def any_cluster(request: pytest.FixtureRequest) -> Cluster:
    """Each test runs on two workers, then on three."""
    cluster: Cluster = request.getfixturevalue(request.param)
    return cluster


def text(result: types.CallToolResult) -> str:
    [content] = result.content
    assert isinstance(content, types.TextContent)
    return content.text


class Inbox:
    """The notifications the official client's session surfaces, by kind."""

    def __init__(self) -> None:
        self.updated: asyncio.Queue[str] = asyncio.Queue()
        self.tools_changed: asyncio.Queue[None] = asyncio.Queue()
        self.logs: list[tuple[str, Any]] = []

    async def on_message(self, message: types.ServerNotification | Exception) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            self.updated.put_nowait(str(message.params.uri))
        elif isinstance(message, types.ToolListChangedNotification):
            self.tools_changed.put_nowait(None)

    async def on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append((params.level, params.data))


async def sample(
    context: ClientRequestContext, params: types.CreateMessageRequestParams
) -> types.CreateMessageResult:
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(type="text", text="peer says hi"), model="m"
    )


async def elicit(
    context: ClientRequestContext, params: types.ElicitRequestParams
) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"go": True})


@asynccontextmanager
async def official_session(
    url: str, traffic: Traffic, inbox: Inbox
) -> AsyncIterator[ClientSession]:
    """The official client's session on `url`, recording its exchanges in `traffic`; its
    transport DELETEs the session when the block ends."""
    async with (
        traffic.client() as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(
            read,
            write,
            sampling_callback=sample,
            elicitation_callback=elicit,
            logging_callback=inbox.on_log,
            message_handler=inbox.on_message,
        ) as session,
    ):
        await session.initialize()
        yield session


async def gone_everywhere(cluster: Cluster, session_id: str) -> list[int]:
    """The status each worker, asked directly, answers for a ping in `session_id`."""
    headers = {
        "mcp-session-id": session_id,
        "mcp-protocol-version": "2025-11-25",
        "accept": "application/json, text/event-stream",
    }
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    async with httpx.AsyncClient(timeout=10) as http:
        answers = [await http.post(url, json=ping, headers=headers) for url in cluster.workers]
    return [answer.status_code for answer in answers]


async def test_the_official_client_runs_a_whole_session_across_the_workers(
    any_cluster: Cluster,
) -> None:
    cluster, traffic, inbox = any_cluster, Traffic(), Inbox()
    uri = f"notes://official-{uuid.uuid4().hex[:8]}"
    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    async with official_session(cluster.url, traffic, inbox) as session:
        listed = await session.list_tools()
        assert {"steps", "touch", "ask", "confirm"} <= {tool.name for tool in listed.tools}
        pids = {text(await session.call_tool("which_worker", {})) for _ in cluster.workers * 2}
        assert len(pids) == len(cluster.workers)  # every worker served this session

        steps = await session.call_tool("steps", {"count": 3}, progress_callback=on_progress)
        assert text(steps).startswith("3 steps on ") and progress == [1, 2, 3]

        await session.set_logging_level("warning")
        await session.call_tool("chatter", {})
        assert inbox.logs == [("warning", "a warning line")]  # not the debug line

        await session.subscribe_resource(uri)
        await asyncio.wait_for(traffic.get_open.wait(), WAIT)
        await touch_elsewhere(session, traffic, inbox, uri)

        await session.call_tool("add_tool", {"name": f"late_{uuid.uuid4().hex[:8]}"})
        await asyncio.wait_for(inbox.tools_changed.get(), WAIT)

    session_id = traffic.session_id
    assert session_id is not None
    assert [e.status for e in traffic.exchanges if e.verb == "DELETE"] == [200]
    assert await gone_everywhere(cluster, session_id) == [404] * len(cluster.workers)


async def touch_elsewhere(session: ClientSession, traffic: Traffic, inbox: Inbox, uri: str) -> None:
    """`touch` until one lands on a worker other than the GET stream's: every update reaches
    the client, once each."""
    listener = traffic.get_worker()
    for _ in range(6):
        await session.call_tool("touch", {"uri": uri})
        assert await asyncio.wait_for(inbox.updated.get(), WAIT) == uri
        if traffic.last("tools/call").worker != listener:
            break
    assert traffic.last("tools/call").worker != listener
    assert inbox.updated.empty()
