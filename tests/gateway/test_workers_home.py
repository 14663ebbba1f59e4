"""What one proxy worker holds, reached through the others (issue 25; gateway/home.py): the
input_required bridge's pending calls and the tasks the proxy forwards.

Real parts: `redis-server`, `haproxy`, proxy and gateway worker processes
(tests/gateway/home_worker.py: a bearer token required, handshake era upstream) in front of
tests/gateway/home_upstream.py over stdio (a process per worker: a call or task lives in the
one worker that started it). The rounds are sent to chosen worker ports, so a retry surely
lands on another worker than the call's.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis

from mcpkit import Client
from mcpkit.client import HTTPOptions, InputRequired
from mcpkit.errors import ProtocolError
from mcpkit.gateway import proxy
from mcpkit.gateway.home import SILENCE
from tests.gateway.home_worker import TOKENS
from tests.http.servers import unused_port, wait_until_listening
from tests.peers import redis_server
from tests.scaleout.conftest import haproxy, processes

pytestmark = pytest.mark.timeout(240)  # worker processes start slowly on a loaded machine

UPSTREAM = f"{sys.executable} {Path(__file__).with_name('home_upstream.py')}"
ALICE, MALLORY = list(TOKENS)
JSONObject = dict[str, Any]


@pytest.fixture(scope="module", autouse=True)
def request_state_keys() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:  # every worker process inherits it
        patch.setenv("MCPKIT_REQUEST_STATE_KEYS", "home-workers-tests-request-state-key")
        yield


def worker(port: int, redis: str, target: str) -> list[str]:
    return [sys.executable, "-m", "tests.gateway.home_worker", str(port), redis, target]


@dataclass(frozen=True)
class Workers:
    urls: list[str]  # each worker's /mcp
    balanced: str  # haproxy's /mcp, round robin over them
    redis: str


@contextlib.contextmanager
def workers(target: str, count: int) -> Iterator[Workers]:
    """`count` workers of `target` sharing a Redis of their own, behind haproxy."""
    with redis_server() as redis:
        ports = [unused_port() for _ in range(count)]
        with processes([worker(port, redis, target) for port in ports]):
            urls = [f"http://127.0.0.1:{port}/mcp" for port in ports]
            for url in urls:
                wait_until_listening(url, 60)
            with haproxy(ports) as balanced:
                yield Workers(urls, balanced, redis)


@pytest.fixture(scope="module")
def proxy_workers() -> Iterator[Workers]:
    with workers(UPSTREAM, 3) as urls:
        yield urls


@pytest.fixture(scope="module")
def gateway_workers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workers]:
    path = tmp_path_factory.mktemp("home") / "servers.json"
    command, script = UPSTREAM.split(" ")
    path.write_text(json.dumps({"mcpServers": {"up": {"command": command, "args": [script]}}}))
    with workers(str(path), 2) as urls:
        yield urls


def as_(token: str) -> HTTPOptions:
    return HTTPOptions(headers={"authorization": f"Bearer {token}"})


def sample(params: Any) -> JSONObject:
    asked = params.messages[0].content.text
    return {"role": "assistant", "content": {"type": "text", "text": f"re {asked}"}, "model": "m"}


def elicit(params: Any) -> JSONObject:
    return {"action": "accept", "content": {"name": "Ada"}}


def client(url: str, token: str = ALICE) -> Client:
    """A 2026-07-28 client (no session: any request may go to any worker) that can be asked."""
    return Client(
        url, mode="per-request", http=as_(token), sampling=sample, elicitation=elicit, timeout=30
    )


def text(result: Any) -> str:
    return str(result.content[0].text)


async def round_on(
    on: Client, tool: str, arguments: JSONObject, before: InputRequired | None, answering: Client
) -> Any:
    """One round of `tool` sent to `on`: the first (`before` None) or the retry of `before`,
    answered with `answering`'s handlers."""
    if before is None:
        return await on.call_tool(tool, arguments, input_required="return")
    responses = await answering.answer_input(before)
    return await on.call_tool(
        tool,
        arguments,
        input_required="return",
        input_responses=responses,
        request_state=before.request_state,
    )


async def until_marked(mark: Path, text: str, pinging: Client) -> None:
    """Until another process wrote `text` in the file `mark` (at most 20 s)."""
    deadline = time.monotonic() + 20
    while not (mark.exists() and mark.read_text() == text):
        assert time.monotonic() < deadline, f"{mark} never said {text!r}"
        await pinging.ping()


# -- the input_required bridge -------------------------------------------------------------


@pytest.mark.parametrize("form", ["proxy", "gateway"])
async def test_each_round_of_a_bridged_call_may_land_on_another_worker(
    form: str, proxy_workers: Workers, gateway_workers: Workers
) -> None:
    """The call starts on worker 1 (which holds it and its upstream process); its retries go
    to worker 2, then through the balancer: each is sent home to worker 1."""
    chosen = proxy_workers if form == "proxy" else gateway_workers
    urls = [*chosen.urls, chosen.balanced]
    tool = "ask" if form == "proxy" else "up__ask"
    async with client(urls[0]) as one, client(urls[1]) as two, client(urls[-1]) as balanced:
        first = await round_on(one, tool, {"question": "tea?"}, None, one)
        assert isinstance(first, InputRequired)
        assert [r["method"] for r in first.input_requests.values()] == ["sampling/createMessage"]
        second = await round_on(two, tool, {"question": "tea?"}, first, two)
        assert isinstance(second, InputRequired)  # worker 1's next round, through worker 2
        assert [r["method"] for r in second.input_requests.values()] == ["elicitation/create"]
        assert second.request_state != first.request_state
        done = await round_on(balanced, tool, {"question": "tea?"}, second, balanced)
        assert text(done) == "re tea? / Ada"
        # Worker 1's own round needs no other: an answer at home stays at home.
        again = await round_on(one, tool, {"question": "milk?"}, None, one)
        again = await round_on(one, tool, {"question": "milk?"}, again, one)
        assert text(await round_on(two, tool, {"question": "milk?"}, again, two)) == (
            "re milk? / Ada"
        )


async def test_another_principal_cannot_go_on_with_a_call_through_another_worker(
    proxy_workers: Workers,
) -> None:
    """The requestState is bound to its caller where the call is: Mallory, holding Alice's
    state, is refused on another worker as on the same one; Alice then goes on."""
    one, two = proxy_workers.urls[:2]
    async with client(one) as alice, client(two, MALLORY) as mallory, client(two) as alice_two:
        first = await round_on(alice, "ask", {"question": "q"}, None, alice)
        assert isinstance(first, InputRequired)
        with pytest.raises(ProtocolError) as refused:
            await round_on(mallory, "ask", {"question": "q"}, first, mallory)
        assert refused.value.code == -32602
        assert "requestState is unknown or expired" in refused.value.message
        second = await round_on(alice_two, "ask", {"question": "q"}, first, alice_two)
        assert isinstance(second, InputRequired)
        assert text(await round_on(alice, "ask", {"question": "q"}, second, alice)) == "re q / Ada"


async def test_a_requeststate_no_worker_made_is_refused_at_once(
    proxy_workers: Workers,
) -> None:
    """A requestState names its worker under a MAC of the workers' shared key: one naming a
    worker that does not exist (or a real worker, with the MAC changed) is refused where it
    lands, without a home call that would wait for a sign that never comes (SILENCE s)."""
    one, two = proxy_workers.urls[:2]
    async with client(one) as alice, client(two) as alice_two:
        first = await round_on(alice, "ask", {"question": "q"}, None, alice)
        assert isinstance(first, InputRequired)
        named, _, mac = first.request_state.rpartition(".")
        random = named.partition(".")[2]
        forged = [f"{named}.{mac[::-1]}", f"0123456789abcdef.{random}.{mac}"]
        for state in forged:
            began = time.monotonic()
            with pytest.raises(ProtocolError) as refused:
                await alice_two.call_tool(
                    "ask", {"question": "q"}, input_required="return", request_state=state
                )
            assert refused.value.code == -32602
            assert time.monotonic() - began < SILENCE - 2  # no wait for a silent home
        # The real one still goes on, through the other worker.
        second = await round_on(alice_two, "ask", {"question": "q"}, first, alice_two)
        assert isinstance(second, InputRequired)


async def test_a_retry_waits_as_long_as_its_home_works(proxy_workers: Workers) -> None:
    """The upstream works longer than a silent home would be given up: the heartbeats keep
    the retry on worker 2 waiting for worker 1's answer."""
    one, two = proxy_workers.urls[:2]
    arguments = {"seconds": SILENCE + 2}
    async with client(one) as first_client, client(two) as second_client:
        first = await round_on(first_client, "ask_then_work", arguments, None, first_client)
        assert isinstance(first, InputRequired)
        done = await round_on(second_client, "ask_then_work", arguments, first, second_client)
        assert text(done) == "worked"


async def test_a_cancelled_retry_cancels_the_call_at_its_home(
    proxy_workers: Workers, tmp_path: Path
) -> None:
    """A retry on worker 2 waits for worker 1's call (the upstream holds it); cancelling it
    cancels the call there, upstream too, as a cancel on worker 1 would: its requestState
    is then gone."""
    one, two = proxy_workers.urls[:2]
    mark = tmp_path / "cancelled"
    arguments = {"mark": str(mark)}
    async with client(one) as first_client, client(two) as second_client:
        first = await round_on(first_client, "ask_then_hold", arguments, None, first_client)
        assert isinstance(first, InputRequired)
        retry = round_on(second_client, "ask_then_hold", arguments, first, second_client)
        waiting = asyncio.ensure_future(retry)
        # Until the answer went through worker 2 to worker 1 and upstream (another process
        # writes the mark): the retry waits at home.
        await until_marked(mark, "holding", first_client)
        assert not waiting.done()
        waiting.cancel()  # its stream closes: worker 2 notices, and tells worker 1
        await asyncio.wait([waiting])
        await until_marked(mark, "cancelled", first_client)
        with pytest.raises(ProtocolError) as gone:
            await round_on(first_client, "ask_then_hold", arguments, first, first_client)
        assert gone.value.code == -32602


# -- forwarded tasks -----------------------------------------------------------------------


async def test_a_task_created_on_one_worker_is_read_and_cancelled_on_another(
    proxy_workers: Workers,
) -> None:
    one, two, three = proxy_workers.urls[:3]
    async with client(one) as creator, client(two) as reader, client(three, MALLORY) as mallory:
        handle = await creator.start_tool("forever", {})
        task = {"taskId": handle.task_id}
        assert (await reader.request("tasks/get", task))["status"] == "working"
        for method in ("tasks/get", "tasks/cancel"):  # the owner is checked where the task is
            with pytest.raises(ProtocolError) as hidden:
                await mallory.request(method, task)
            assert (hidden.value.code, hidden.value.message) == (
                -32602,
                "Failed to retrieve task: Task not found",
            )
        await reader.request("tasks/cancel", task)
        assert (await creator.request("tasks/get", task))["status"] == "cancelled"
        with pytest.raises(ProtocolError) as unknown:
            await reader.request("tasks/get", {"taskId": "made-up"})
        assert unknown.value.code == -32602


async def test_a_task_request_where_the_task_lives_costs_no_redis_round_trip(
    proxy_workers: Workers,
) -> None:
    """The record is read only on a miss: never on the worker holding the task, once on
    another (the other Redis traffic of these workers, on their own: no MGET)."""
    one, two = proxy_workers.urls[:2]
    redis = Redis.from_url(proxy_workers.redis)
    try:
        async with client(one) as home, client(two) as away:
            handle = await home.start_tool("forever", {})
            task = {"taskId": handle.task_id}
            before = await record_reads(redis)
            for _ in range(3):
                await home.request("tasks/get", task)
            at_home = await record_reads(redis)
            await away.request("tasks/get", task)
            elsewhere = await record_reads(redis)
            await home.request("tasks/cancel", task)
    finally:
        await redis.aclose()
    assert (at_home - before, elsewhere - at_home) == (0, 1)


async def record_reads(redis: Any) -> int:
    stats = await redis.info("commandstats")
    return int(stats.get("cmdstat_mget", {}).get("calls", 0))


async def test_a_handshake_sessions_task_through_the_balancer(proxy_workers: Workers) -> None:
    """A 2025-11-25 session through round-robin haproxy: every tasks/* request of its task
    lands on the three workers in turn, and reaches the one that created it; the task's
    status notifications reach the session's stream, wherever it is open."""
    statuses: asyncio.Queue[JSONObject] = asyncio.Queue()

    def heard(method: str, params: JSONObject | None) -> None:
        if method == "notifications/tasks/status" and params is not None:
            statuses.put_nowait(params)

    async with Client(
        proxy_workers.balanced,
        mode="handshake",
        http=as_(ALICE),
        timeout=30,
        on_notification=heard,
    ) as alice:
        handle = await alice.start_tool("report", {"topic": "tides"})
        for _ in range(3):
            assert (await handle.status()).status in ("working", "completed")
        assert text(await handle.result()) == "report on tides"
        held = await alice.start_tool("forever", {})
        for _ in range(3):
            assert (await held.status()).status == "working"
        await held.cancel()
        assert (await held.status()).status == "cancelled"
        async with asyncio.timeout(20):  # the notification's way: worker to stream
            while True:
                note = await statuses.get()
                if (note["taskId"], note["status"]) == (held.task_id, "cancelled"):
                    break


async def test_a_listen_on_another_worker_hears_the_tasks_status(
    proxy_workers: Workers,
) -> None:
    """A 2026-07-28 listen for a task created through another worker: accepted for its
    owner only, and the status comes from the task's worker to the listen's."""
    one, two = proxy_workers.urls[:2]
    async with client(one) as creator, client(two) as listener, client(two, MALLORY) as other:
        handle = await creator.start_tool("forever", {})
        async with other.listen(task_ids=[handle.task_id]) as refused:
            assert "taskIds" not in refused.acknowledged
        async with listener.listen(task_ids=[handle.task_id]) as subscription:
            assert subscription.acknowledged["taskIds"] == [handle.task_id]
            await handle.cancel()
            async with asyncio.timeout(30):  # a status lost between workers: fail, not hang
                async for note in subscription:
                    assert note.params is not None and note.params["taskId"] == handle.task_id
                    if note.params["status"] == "cancelled":
                        break


@pytest.fixture(scope="module")
def http_upstream_workers() -> Iterator[Workers]:
    """Two workers in front of home_upstream.py over HTTP: a session's upstream session is
    the same on both (resume.py), so its task list holds the tasks created through both."""
    port = unused_port()
    upstream = [sys.executable, str(Path(__file__).with_name("home_upstream.py")), str(port)]
    with processes([upstream]):
        url = f"http://127.0.0.1:{port}/mcp"
        wait_until_listening(url, 20)
        with workers(url, 2) as urls:
            yield urls


async def test_tasks_list_on_another_worker_shows_the_callers_tasks(
    http_upstream_workers: Workers,
) -> None:
    """A 2025-11-25 session whose requests go to worker 1, then worker 2: the task created
    on worker 1 is listed on worker 2 (it is the caller's), read there, and cancelled."""
    one, two = http_upstream_workers.urls
    async with Client(one, mode="handshake", http=as_(ALICE), timeout=30) as alice:
        handle = await alice.start_tool("forever", {})
        opened = alice.opened_session()
        assert opened is not None
        await alice.detach()
    there = await Client(two, http=as_(ALICE), timeout=30).resume(opened)
    try:
        listed = await there.request("tasks/list", {})
        assert [task["taskId"] for task in listed["tasks"]] == [handle.task_id]
        task = {"taskId": handle.task_id}
        assert (await there.request("tasks/get", task))["status"] == "working"
        await there.request("tasks/cancel", task)
        assert (await there.request("tasks/get", task))["status"] == "cancelled"
    finally:
        await there.close()


# -- a worker that stops while it holds a call or a task -----------------------------------


async def test_a_worker_killed_holding_a_call_or_a_task_is_a_clear_error_not_a_hang() -> None:
    ports = [unused_port(), unused_port()]
    one, two = (f"http://127.0.0.1:{port}/mcp" for port in ports)
    with redis_server() as redis:
        first = subprocess.Popen(worker(ports[0], redis, UPSTREAM))
        with processes([worker(ports[1], redis, UPSTREAM)]):
            try:
                for url in (one, two):
                    wait_until_listening(url, 60)
                async with client(one) as there:
                    pending = await round_on(there, "ask", {"question": "q"}, None, there)
                    assert isinstance(pending, InputRequired)
                    handle = await there.start_tool("forever", {})
                first.send_signal(signal.SIGKILL)
                first.wait(20)
                async with client(two) as here:
                    started = time.monotonic()
                    with pytest.raises(ProtocolError) as lost:
                        await round_on(here, "ask", {"question": "q"}, pending, here)
                    assert lost.value.code == -32602
                    assert "requestState is unknown or expired" in lost.value.message
                    with pytest.raises(ProtocolError) as gone:
                        await here.request("tasks/get", {"taskId": handle.task_id})
                    assert gone.value.code == -32603
                    assert "worker holding the task does not answer" in gone.value.message
                    assert time.monotonic() - started < 25  # two bounded waits of 5 s
            finally:
                first.kill()
                first.wait(10)


# -- one process: two retries of one round ---------------------------------------------------


async def test_two_retries_of_one_round_end_the_call_once(tmp_path: Path) -> None:
    """A requestState replayed while its first retry waits: both wait on the one call; when
    the first is cancelled the second is told the state is gone (not a cancel it did not
    ask for), and the call's upstream session is closed once, never lent again."""
    server = proxy(UPSTREAM.split(" "), mode="handshake")
    mark = tmp_path / "cancelled"
    arguments = {"mark": str(mark)}
    async with server.running(), client_of(server) as one:
        first = await round_on(one, "ask_then_hold", arguments, None, one)
        assert isinstance(first, InputRequired)
        retries = [
            asyncio.ensure_future(round_on(one, "ask_then_hold", arguments, first, one))
            for _ in range(2)
        ]
        await until_marked(mark, "holding", one)
        retries[0].cancel()
        await asyncio.wait([retries[0]])
        with pytest.raises(ProtocolError) as gone:
            await retries[1]
        assert gone.value.code == -32602
        worked = await round_on(one, "ask_then_work", {"seconds": 0}, None, one)
        worked = await round_on(one, "ask_then_work", {"seconds": 0}, worked, one)
        assert text(worked) == "worked"


def client_of(server: Any) -> Client:
    return Client(server, mode="per-request", sampling=sample, elicitation=elicit, timeout=30)
