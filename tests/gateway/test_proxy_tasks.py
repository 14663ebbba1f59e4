"""Tasks through the proxy (gateway/tasks.py), in every era pair: our client downstream, an
mcpkit server with task tools upstream over stdio (task_upstream.py, a real subprocess), and
server-everything's 2025-11-25 task tool. The official `mcp` 2.3.0 server has no tasks, so it
is not an upstream here."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from mcpkit import Client
from mcpkit.errors import CapabilityNotDeclared, ProtocolError, TaskCancelled
from mcpkit.gateway import proxy
from mcpkit.types import TextContent
from tests.http.servers import serving
from tests.peers import node_env, npm_command

JSONObject = dict[str, Any]
UPSTREAM = [sys.executable, str(Path(__file__).with_name("task_upstream.py"))]
ERAS = ["handshake", "per-request"]
PAIRS = [(down, up) for down in ERAS for up in ERAS]


@contextlib.asynccontextmanager
async def through(up: str, down: str, **options: Any) -> AsyncIterator[Client]:
    """Our client (era `down`) through the proxy, served over Streamable HTTP, to
    task_upstream.py (era `up`) over stdio."""
    async with (
        serving_proxy(proxy(UPSTREAM, mode=up)) as url,
        Client(url, mode=down, timeout=30, **options) as client,
    ):
        yield client


@contextlib.asynccontextmanager
async def serving_proxy(server: Any) -> AsyncIterator[str]:
    async with serving(server.http_app()) as base:  # stopped once every upstream is closed
        yield base + "/mcp"


def text(result: Any) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


def elicit_ada(params: Any) -> JSONObject:
    return {"action": "accept", "content": {"name": "Ada"}}


@pytest.mark.parametrize(("down", "up"), PAIRS)
async def test_a_task_runs_to_its_result_in_every_era_pair(down: str, up: str) -> None:
    async with through(up, down) as client:
        if down == "handshake":
            assert client.supports("tasks", "requests", "tools", "call")
        handle = await client.start_tool("report", {"topic": "tides"})
        assert handle.task_id  # a task, not an inline answer
        assert text(await handle.result()) == "report on tides"
        state = await handle.status()
        assert state.status == "completed"
        assert state.task_id == handle.task_id
        # call_tool follows the task by itself, as against the upstream directly
        assert text(await client.call_tool("report", {"topic": "reefs"})) == "report on reefs"
        assert text(await client.call_tool("plain", {"x": 2})) == "4"


@pytest.mark.parametrize(("down", "up"), PAIRS)
async def test_a_failed_task_keeps_its_json_rpc_error(down: str, up: str) -> None:
    async with through(up, down) as client:
        handle = await client.start_tool("broken", {})
        with pytest.raises(ProtocolError) as failed:
            await handle.result()
        assert (failed.value.code, failed.value.message) == (-32042, "broken on purpose")
        assert failed.value.data == {"why": "test"}
        assert (await handle.status()).status == "failed"


@pytest.mark.parametrize(("down", "up"), PAIRS)
async def test_tasks_cancel_cancels_the_task(down: str, up: str) -> None:
    async with through(up, down) as client:
        handle = await client.start_tool("forever", {})
        await handle.cancel()
        assert (await handle.status()).status == "cancelled"
        with pytest.raises(TaskCancelled):
            await handle.result()
        if down == "per-request":
            await handle.cancel()  # an ended task: the extension acknowledges
        else:
            with pytest.raises(ProtocolError) as ended:
                await handle.cancel()
            assert ended.value.code == -32602


@pytest.mark.parametrize("up", ERAS)
async def test_a_cancelled_result_wait_leaves_the_task_running(up: str) -> None:
    async with through(up, "handshake") as client:
        handle = await client.start_tool("forever", {})
        waiting = asyncio.ensure_future(handle.result())
        for _ in range(3):  # the tasks/result request has reached the proxy and gone on
            await client.ping()
        assert not waiting.done()
        waiting.cancel()  # notifications/cancelled for tasks/result only
        await asyncio.wait([waiting])
        await client.ping()
        assert (await handle.status()).status == "working"
        await handle.cancel()
        assert (await handle.status()).status == "cancelled"


@pytest.mark.parametrize("up", ERAS)
async def test_a_handshake_client_gets_status_notifications(up: str) -> None:
    statuses: asyncio.Queue[JSONObject] = asyncio.Queue()

    def heard(method: str, params: JSONObject | None) -> None:
        if method == "notifications/tasks/status" and params is not None:
            statuses.put_nowait(params)

    async with through(up, "handshake", on_notification=heard) as c:
        handle = await c.start_tool("forever", {})
        await handle.cancel()
        while True:
            note = await asyncio.wait_for(statuses.get(), 20)
            assert note["taskId"] == handle.task_id
            assert "ttl" in note and "ttlMs" not in note  # the 2025-11-25 shape
            if note["status"] == "cancelled":
                break


@pytest.mark.parametrize("up", ERAS)
async def test_a_per_request_client_listens_to_its_task(up: str) -> None:
    async with through(up, "per-request") as client:
        handle = await client.start_tool("forever", {})
        async with client.listen(task_ids=[handle.task_id]) as subscription:
            assert subscription.acknowledged["taskIds"] == [handle.task_id]
            await handle.cancel()
            async for note in subscription:
                assert note.method == "notifications/tasks"
                assert note.params is not None
                assert note.params["taskId"] == handle.task_id
                assert "ttlMs" in note.params  # the 2026-07-28 shape
                if note.params["status"] == "cancelled":
                    break


@pytest.mark.parametrize(("down", "up"), [p for p in PAIRS if p != ("per-request", "handshake")])
async def test_a_question_inside_the_task_reaches_the_client(down: str, up: str) -> None:
    async with through(up, down, elicitation=elicit_ada) as client:
        handle = await client.start_tool("greet", {})
        assert text(await handle.result()) == "hello Ada"


async def test_a_question_of_a_handshake_upstreams_task_is_not_carried_to_2026() -> None:
    """The named gap: the shared upstream client declares no elicitation, so the upstream
    tool's question fails inside the task instead of reaching the 2026-07-28 client."""
    server = proxy(UPSTREAM, mode="handshake")
    async with (
        serving_proxy(server) as url,
        Client(url, mode="per-request", elicitation=elicit_ada, timeout=30) as client,
    ):
        handle = await client.start_tool("greet", {})
        result = await handle.result()
    assert result.is_error
    assert "did not declare the 'elicitation' capability" in text(result)


async def test_tasks_list_has_no_equivalent_in_front_of_a_2026_upstream() -> None:
    """The capability offers no `list` there, so a client does not even send it."""
    async with through("per-request", "handshake") as client:
        assert "list" not in client.server_capabilities["tasks"]
        with pytest.raises(CapabilityNotDeclared):
            await client.request("tasks/list", {})


async def test_a_handshake_client_asking_a_task_of_an_inline_answer_gets_a_finished_task() -> None:
    async with through("per-request", "handshake") as client:
        handle = await client.start_tool("plain", {"x": 21})  # the upstream answers at once
        assert handle.task_id.startswith("proxy-")
        assert (await handle.status()).status == "completed"
        assert text(await handle.result()) == "42"


@pytest.mark.parametrize("share", [False, True])
async def test_a_session_cannot_reach_another_sessions_task(share: bool) -> None:
    """Two handshake-era sessions: in front of a 2026-07-28 upstream (which has no
    sessions) or with one shared upstream session, only the proxy's owner check keeps one
    session from another's task."""
    server = proxy(UPSTREAM, mode="handshake" if share else "per-request")
    server.share_upstream = share
    async with (
        serving_proxy(server) as url,
        Client(url, mode="handshake", timeout=30) as alice,
        Client(url, mode="handshake", timeout=30) as mallory,
    ):
        handle = await alice.start_tool("forever", {})
        task = {"taskId": handle.task_id}
        for method in ("tasks/get", "tasks/result", "tasks/cancel"):
            with pytest.raises(ProtocolError) as hidden:
                await mallory.request(method, task)
            assert hidden.value.code == -32602
            assert hidden.value.message == "Failed to retrieve task: Task not found"
        if share:  # the shared upstream session lists both; mallory sees only its own
            listed = await mallory.request("tasks/list", {})
            assert listed["tasks"] == []
            mine = await alice.request("tasks/list", {})
            assert [t["taskId"] for t in mine["tasks"]] == [handle.task_id]
        assert (await handle.status()).status == "working"
        await handle.cancel()


async def test_an_id_the_proxy_did_not_create_is_not_found() -> None:
    async with through("per-request", "per-request") as client:
        with pytest.raises(ProtocolError) as unknown:
            await client.request("tasks/get", {"taskId": "made-up"})
        assert unknown.value.code == -32602


async def test_a_2026_client_runs_server_everythings_required_task_tool() -> None:
    everything = [*npm_command("mcp-server-everything"), "stdio"]
    server = proxy(everything, env=node_env(), mode="handshake")
    async with (
        serving_proxy(server) as url,
        Client(url, mode="per-request", timeout=30) as client,
    ):
        result = await client.call_tool("simulate-research-query", {"topic": "tides"})
        assert "# Research Report: tides" in text(result)


def sample_42(params: Any) -> JSONObject:
    return {"role": "assistant", "content": {"type": "text", "text": "42"}, "model": "m"}


@pytest.mark.parametrize("up", ERAS)
async def test_a_per_request_client_of_a_tasks_upstream_is_asked_and_sees_progress(
    up: str,
) -> None:
    """Our 2026-07-28 client declares the tasks extension: its calls of tools that are not
    tasks still get the upstream's questions (input_required rounds) and progress."""
    seen: list[float] = []
    async with through(up, "per-request", sampling=sample_42) as client:
        asked = await client.call_tool("ask", {"question": "meaning?"})
        assert text(asked) == "the model said 42"
        done = await client.call_tool(
            "steps", {}, on_progress=lambda progress, _total, _message: seen.append(progress)
        )
        assert text(done) == "done"
    assert seen == [1, 2, 3]
