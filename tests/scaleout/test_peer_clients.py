"""Peer clients run whole sessions through haproxy (round robin, no stickiness) in front of 2
and 3 workers sharing Redis: the official SDK's client (`mcp`, handshake era) and FastMCP
4.1.6's client (its own venv, tests/scaleout/fastmcp_client.py run as a subprocess; handshake
era and 2026-07-28). Which worker answered each exchange is read from haproxy's `X-Worker`
header by the client's own HTTP client (tests/scaleout/peer_traffic.py)."""

from __future__ import annotations

import asyncio
import json
import uuid
from asyncio.subprocess import PIPE
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import pytest
from mcp import ClientSession, types
from mcp.client.session import ClientRequestContext
from mcp.client.streamable_http import streamable_http_client

from tests.peers import fastmcp_python
from tests.scaleout.conftest import Cluster
from tests.scaleout.peer_traffic import Traffic

HERE = Path(__file__).resolve().parent
FASTMCP_CLIENT = HERE / "fastmcp_client.py"
ORDER: dict[str, str | int | bool] = {"item": "tea", "count": 2, "size": "large", "gift": True}
ORDERED = 'accept {"item":"tea","count":2,"size":"large","gift":true} on '
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
    answer = ORDER if params.message == "Your order?" else {"go": True}
    return types.ElicitResult(action="accept", content=answer)


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
        assert {"steps", "touch", "ask", "confirm", "ask_form"} <= {
            tool.name for tool in listed.tools
        }
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
    assert all(e.status < 400 for e in traffic.exchanges)
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


async def test_the_official_client_answers_sampling_and_elicitation_mid_call(
    any_cluster: Cluster,
) -> None:
    """The client's answer is POSTed through haproxy while the call is in flight: it lands on
    another worker than the one running the handler (round robin), and reaches it."""
    cluster, traffic, inbox = any_cluster, Traffic(), Inbox()
    crossed = []
    async with official_session(cluster.url, traffic, inbox) as session:
        asks = [("ask", "peer says hi"), ("confirm", "go on "), ("ask_form", ORDERED)]
        for tool, expected in asks:
            result = await session.call_tool(tool, {})
            assert not result.is_error and expected in text(result)
            call, answer = traffic.last("tools/call"), traffic.last("answer")
            assert answer.status == 202
            crossed.append(answer.worker != call.worker)
    assert any(crossed)  # an answer reached the handler from another worker


class Relay:
    """A TCP relay on loopback in front of haproxy that cuts, once, the connection carrying
    the first progress notification, right after passing it on: the client sees its
    response stream drop mid-call."""

    def __init__(self, target: str) -> None:
        self.target = urlsplit(target)
        self.cut = asyncio.Event()
        self.url = ""
        self.connections: set[asyncio.Task[None]] = set()

    async def __aenter__(self) -> Relay:
        self.server = await asyncio.start_server(self.accept, "127.0.0.1", 0)
        port = self.server.sockets[0].getsockname()[1]
        self.url = urlunsplit(self.target._replace(netloc=f"127.0.0.1:{port}"))
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.server.close()
        for connection in self.connections:
            connection.cancel()
        await asyncio.gather(*self.connections, return_exceptions=True)
        await self.server.wait_closed()

    def accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connection = asyncio.ensure_future(self.serve(reader, writer))
        self.connections.add(connection)

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target.port)
        pumps = [
            asyncio.ensure_future(self.pump(reader, up_writer, watch=False)),
            asyncio.ensure_future(self.pump(up_reader, writer, watch=True)),
        ]
        try:
            await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for pump in pumps:
                pump.cancel()
            await asyncio.gather(*pumps, return_exceptions=True)
            for each in (writer, up_writer):
                each.close()

    async def pump(
        self, source: asyncio.StreamReader, sink: asyncio.StreamWriter, watch: bool
    ) -> None:
        while data := await source.read(65536):
            sink.write(data)
            await sink.drain()
            if watch and not self.cut.is_set() and b"notifications/progress" in data:
                self.cut.set()
                return


async def test_the_official_client_resumes_a_dropped_stream_by_itself(
    any_cluster: Cluster,
) -> None:
    """Its POST stream drops after the first progress notification; the client resumes it by
    itself (a GET with Last-Event-ID, through haproxy, on whichever worker) and gets the
    rest of the progress once, in order, then the answer."""
    cluster, traffic, inbox = any_cluster, Traffic(), Inbox()
    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    async with Relay(cluster.url) as relay, official_session(relay.url, traffic, inbox) as session:
        arguments = {"count": 4, "pause": 0.3}
        result = await session.call_tool("steps", arguments, progress_callback=on_progress)
    assert relay.cut.is_set()
    assert text(result).startswith("4 steps on ") and progress == [1, 2, 3, 4]
    [call] = [e for e in traffic.exchanges if e.kind == "tools/call"]
    resumes = [e for e in traffic.exchanges if e.resumed]
    assert [(e.verb, e.status) for e in resumes] == [("GET", 200)]
    print(f"stream made on {call.worker}, resumed on {resumes[0].worker}")


async def fastmcp_session(cluster: Cluster, mode: str) -> dict[str, Any]:
    """What FastMCP's client saw running tests/scaleout/fastmcp_client.py on the cluster."""
    tag = uuid.uuid4().hex[:8]
    argv = [str(fastmcp_python()), str(FASTMCP_CLIENT), cluster.url, mode]
    process = await asyncio.create_subprocess_exec(
        *argv, f"notes://fastmcp-{tag}", f"late_{tag}", stdout=PIPE, stderr=PIPE
    )
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode == 0, err.decode()[-3000:]
    seen: dict[str, Any] = json.loads(out.decode().strip().splitlines()[-1])
    return seen


async def test_fastmcp_s_client_runs_a_whole_handshake_era_session(any_cluster: Cluster) -> None:
    cluster = any_cluster
    seen = await fastmcp_session(cluster, "legacy")
    assert seen["protocol"] == "2025-11-25"
    assert {"steps", "touch", "ask", "confirm", "ask_form"} <= set(seen["tools"])
    assert len(set(seen["pids"])) == len(cluster.workers)  # every worker served it
    assert seen["steps"].startswith("3 steps on ") and seen["progress"] == [1, 2, 3]
    assert seen["logs"] == [["warning", "a warning line"]]  # at the level it set
    updates = seen["updates"]
    assert updates["touched"][-1] != updates["listener"]  # made away from its GET stream
    assert updates["received"] == [seen["uri"]] * len(updates["touched"])
    assert updates["extra"] == 0  # each update once
    assert_answered_mid_call(seen["asked"], "fastmcp says hi")
    traffic = seen["traffic"]
    assert [e["status"] for e in traffic if e["verb"] == "DELETE"] == [200]
    assert all(e["status"] < 400 for e in traffic)  # no exchange refused
    assert await gone_everywhere(cluster, seen["session_id"]) == [404] * len(cluster.workers)


def assert_answered_mid_call(asked: list[dict[str, Any]], sampled: str) -> None:
    """`ask` got the sampled text, `confirm` the accepted form; each answer was POSTed while
    the call ran, at least one to another worker than the call's."""
    [ask, confirm, form] = asked
    assert sampled in ask["text"] and confirm["text"].startswith("go on ")
    assert form["text"].startswith(ORDERED)
    crossed = []
    for each in asked:
        [(_, _, call_worker), (verb, kind, answer_worker)] = each["exchanges"]
        assert (verb, kind) == ("POST", "answer")
        crossed.append(answer_worker != call_worker)
    assert any(crossed)


async def test_fastmcp_s_client_speaks_2026_07_28_with_the_workers(any_cluster: Cluster) -> None:
    """FastMCP's default mode probes `server/discover` and speaks 2026-07-28: no session; its
    input_required rounds (sampling, elicitation) are retried on another worker, which opens
    the sealed requestState; a `subscriptions/listen` stream hears changes made elsewhere."""
    cluster = any_cluster
    seen = await fastmcp_session(cluster, "auto")
    assert seen["protocol"] == "2026-07-28" and seen["session_id"] is None
    assert {"steps", "touch", "ask", "confirm", "ask_form"} <= set(seen["tools"])
    assert len(set(seen["pids"])) == len(cluster.workers)
    assert seen["steps"].startswith("3 steps on ") and seen["progress"] == [1, 2, 3]
    # FastMCP asks for every level per request (`debug` in each request's _meta)
    assert seen["logs"] == [["debug", "a debug line"], ["warning", "a warning line"]]
    updates = seen["updates"]
    assert updates["honored"] == {
        "tools_list_changed": True,
        "resource_subscriptions": [seen["uri"]],
    }
    assert updates["received"] == ["ResourceUpdated", "ToolsListChanged"]
    assert any(worker != updates["listener"] for worker in updates["made"])
    [ask, confirm, form] = seen["asked"]
    assert "fastmcp says hi" in ask["text"] and confirm["text"].startswith("go on ")
    assert form["text"].startswith(ORDERED)
    crossed = []
    for each in seen["asked"]:  # the call, then its retry carrying the answer
        [(_, first, asked_on), (_, retry, answered_on)] = each["exchanges"]
        assert first == retry == "tools/call"
        crossed.append(asked_on != answered_on)
    assert any(crossed)
    assert not [e for e in seen["traffic"] if e["verb"] in ("GET", "DELETE")]
    assert all(e["status"] < 400 for e in seen["traffic"])
