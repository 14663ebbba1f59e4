"""Tasks across workers: a task created on one worker is polled, listed and collected on
another, in both eras, through haproxy (round robin, no stickiness) with Redis as the only
shared part; a task whose worker was killed reads as failed on the others within a bound, and
a cancel made on one worker stops the handler running on another."""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcpkit import Client, Server
from mcpkit.server.tasks import TaskSettings
from mcpkit.stores import MemoryTaskStore
from mcpkit.stores.redis_tasks import RedisTaskStore
from mcpkit.transports.http.redis_state import RedisState
from mcpkit.transports.http.state import LocalState
from tests.http.servers import unused_port, wait_until_listening
from tests.scaleout.conftest import Cluster, processes
from tests.scaleout.task_worker import HEARTBEAT
from tests.scaleout.test_per_request import GO, answer

MODERN, HANDSHAKE = "2026-07-28", "2025-11-25"
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
TASKS = {"extensions": {"io.modelcontextprotocol/tasks": {}}, "elicitation": {"form": {}}}
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": TASKS,
}
WORKER = Path(__file__).with_name("task_worker.py")


class Session:
    """Raw JSON-RPC over HTTP at one revision; each answer with the worker that gave it."""

    def __init__(self, http: httpx.AsyncClient, url: str, version: str) -> None:
        self.http, self.url, self.version = http, url, version
        self.headers = {**ACCEPT, "mcp-protocol-version": version}
        self.ids = iter(range(1, 10**6))

    async def open(self) -> Session:
        """The handshake (2025-11-25): the session id goes on every later request."""
        params = {"protocolVersion": self.version, "capabilities": {}, "clientInfo": INFO}
        response = await self.http.post(self.url, json=_request(0, "initialize", params))
        answer(response)
        self.headers["mcp-session-id"] = response.headers["mcp-session-id"]
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        await self.http.post(self.url, json=note, headers=self.headers)
        return self

    async def call(self, method: str, params: dict[str, Any], url: str = "") -> tuple[Any, str]:
        """(the answer's result, or its error; the X-Worker that answered, else the URL)."""
        headers = dict(self.headers)
        if self.version == MODERN:
            params = {**params, "_meta": META}
            headers["mcp-method"] = method
            name = params.get("name", params.get("taskId"))
            if name is not None:
                headers["mcp-name"] = name
        target = url or self.url
        response = await self.http.post(
            target, json=_request(next(self.ids), method, params), headers=headers
        )
        message = answer(response)
        return message.get("result", message.get("error")), response.headers.get("x-worker", target)


INFO = {"name": "scaleout-tests", "version": "0"}


def _request(request_id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


async def until_other_worker(session: Session, creator: str, task_id: str) -> dict[str, Any]:
    """tasks/get until a worker other than `creator` answers (round robin: at once)."""
    for _ in range(4):
        task, worker = await session.call("tasks/get", {"taskId": task_id})
        if worker != creator:
            return dict(task)
    raise AssertionError("haproxy never sent tasks/get to the other worker")


async def test_a_handshake_task_made_on_one_worker_is_served_by_the_other(
    cluster: Cluster,
) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        session = await Session(http, cluster.url, HANDSHAKE).open()
        call = {"name": "slow_task", "arguments": {"seconds": 1.0}, "task": {"ttl": 60_000}}
        created, creator = await session.call("tools/call", call)
        task_id = created["task"]["taskId"]

        seen = await until_other_worker(session, creator, task_id)
        assert seen["taskId"] == task_id and seen["status"] in ("working", "completed")
        listed, lister = await session.call("tasks/list", {})
        assert task_id in [task["taskId"] for task in listed["tasks"]]
        # The next request goes to the worker that did not create the task: it waits for
        # the task (polling Redis) and gives its result.
        result, collector = await session.call("tasks/result", {"taskId": task_id})
        assert collector != lister and collector != creator
        assert result["content"][0]["text"].startswith("done on ")

        stranger = await Session(http, cluster.url, HANDSHAKE).open()
        for _ in "ab":  # another session, on either worker, is told nothing
            error, _ = await stranger.call("tasks/get", {"taskId": task_id})
            assert error["code"] == -32602 and "not found" in error["message"]


async def test_a_2026_task_made_on_one_worker_is_polled_to_its_result_on_the_other(
    cluster: Cluster,
) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        session = Session(http, cluster.url, MODERN)
        call = {"name": "slow_task", "arguments": {"seconds": 0.5}}
        created, creator = await session.call("tools/call", call)
        assert created["resultType"] == "task"
        task_id = created["taskId"]
        task = await until_other_worker(session, creator, task_id)
        deadline = time.monotonic() + 20
        while task["status"] != "completed":
            assert task["status"] == "working" and time.monotonic() < deadline
            task, _ = await session.call("tasks/get", {"taskId": task_id})
        assert task["result"]["content"][0]["text"].startswith("done on ")


@pytest.mark.parametrize("mode", ["handshake", MODERN])
async def test_our_client_follows_a_task_across_workers(cluster: Cluster, mode: str) -> None:
    async with Client(cluster.url, mode=mode) as client:
        handle = await client.start_tool("slow_task", {"seconds": 0.5})
        states = [await handle.status() for _ in "ab"]  # one on each worker
        assert {state.task_id for state in states} == {handle.task_id}
        result = await handle.result()
    assert result.content[0].text.startswith("done on ")  # type: ignore[union-attr]


def test_tasks_of_a_shared_state_go_to_redis_unless_a_store_is_given(redis_url: str) -> None:
    server = Server("shared")
    server.http_app(state=RedisState(redis_url, prefix="decide:"))
    assert isinstance(server.tasks.store, RedisTaskStore)
    given = RedisTaskStore(redis_url, prefix="given:")
    kept = Server("given", tasks=TaskSettings(store=given))
    kept.http_app(state=RedisState(redis_url))
    assert kept.tasks.store is given

    alone = Server("alone", tasks=TaskSettings(store=MemoryTaskStore()))
    with pytest.raises(ValueError, match="MemoryTaskStore"):
        alone.http_app(state=RedisState(redis_url))
    alone.http_app()  # one process: fine

    class Shared(LocalState):  # shared by workers, but with no Redis of its own
        shared = True

    with pytest.raises(ValueError, match="TaskSettings"):
        Server("bare").http_app(state=Shared())


# -- a worker that stops -------------------------------------------------------------------


@pytest.fixture
def pair(redis_url: str) -> Iterator[tuple[str, str]]:
    """Two workers of task_worker.py (heartbeat 0.2 s) sharing Redis; their own URLs."""
    ports = [unused_port(), unused_port()]
    run = [sys.executable, "-m", "mcpkit", "run", str(WORKER), "--transport", "http"]
    argvs = [[*run, "--port", str(port), "--redis", redis_url] for port in ports]
    with processes(argvs):
        urls = tuple(f"http://127.0.0.1:{port}/mcp" for port in ports)
        for url in urls:
            wait_until_listening(url, 20)
        yield urls[0], urls[1]


async def tool_text(session: Session, url: str, name: str) -> str:
    result, _ = await session.call("tools/call", {"name": name, "arguments": {}}, url)
    return str(result["content"][0]["text"])


async def test_a_task_whose_worker_was_killed_reads_failed_on_the_other(
    pair: tuple[str, str],
) -> None:
    runner, survivor = pair
    async with httpx.AsyncClient(timeout=30) as http:
        session = Session(http, runner, MODERN)
        pid = int(await tool_text(session, runner, "which_worker"))
        call = {"name": "slow_task", "arguments": {"seconds": 120}}
        created, _ = await session.call("tools/call", call, runner)
        task_id = created["taskId"]
        # Alive and beating: still working after several heartbeat windows.
        watched_until = time.monotonic() + HEARTBEAT * 3 * 3
        while time.monotonic() < watched_until:
            task, _ = await session.call("tasks/get", {"taskId": task_id}, survivor)
            assert task["status"] == "working"

        os.kill(pid, signal.SIGKILL)
        killed = time.monotonic()
        while task["status"] == "working":
            assert time.monotonic() - killed < 15, "the task still reads working"
            task, _ = await session.call("tasks/get", {"taskId": task_id}, survivor)
        assert task["status"] == "failed"
        assert "worker running this task stopped" in task["statusMessage"]
        assert task["error"]["code"] == -32603


async def test_a_cancel_made_on_one_worker_stops_the_handler_on_the_other(
    pair: tuple[str, str],
) -> None:
    runner, other = pair
    async with httpx.AsyncClient(timeout=30) as http:
        session = Session(http, runner, MODERN)
        call = {"name": "slow_task", "arguments": {"seconds": 120}}
        created, _ = await session.call("tools/call", call, runner)
        assert await tool_text(session, runner, "running_here") == "1"
        cancelled, _ = await session.call("tasks/cancel", {"taskId": created["taskId"]}, other)
        assert cancelled["resultType"] == "complete"
        deadline = time.monotonic() + 15
        while await tool_text(session, runner, "running_here") != "0":
            assert time.monotonic() < deadline, "the handler still runs"
        task, _ = await session.call("tasks/get", {"taskId": created["taskId"]}, runner)
        assert task["status"] == "cancelled"


async def test_answers_sent_to_one_worker_reach_the_task_asking_on_the_other(
    pair: tuple[str, str],
) -> None:
    runner, other = pair
    async with httpx.AsyncClient(timeout=30) as http:
        session = Session(http, runner, MODERN)
        created, _ = await session.call("tools/call", {"name": "ask_in_task"}, runner)
        task_id = created["taskId"]
        task = created
        deadline = time.monotonic() + 15
        while task["status"] != "input_required":
            assert time.monotonic() < deadline, "the task never asked"
            task, _ = await session.call("tasks/get", {"taskId": task_id}, other)
        assert list(task["inputRequests"]) == ["elicit-1"]
        answers = {"taskId": task_id, "inputResponses": {"elicit-1": GO}}
        updated, _ = await session.call("tasks/update", answers, other)
        assert updated["resultType"] == "complete"
        while task["status"] != "completed":
            assert time.monotonic() < deadline, f"the answer never arrived: {task}"
            task, _ = await session.call("tasks/get", {"taskId": task_id}, other)
        assert task["result"]["content"][0]["text"] == "go"
