"""SIGTERM under `--workers N` (a real `mcpkit run` / `mcpkit proxy` on a real redis-server):
each worker drains as one process does -- readiness 503, a new stream refused with 503 and
Retry-After (a new session still opened: it lives in Redis), a subscription ended with its
result, the calls in flight answered -- then exits, and the parent with them, within the
bound. And a port in use is one line (exit 2)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
import redis.asyncio as redis

from mcpkit import Client
from mcpkit.types import CallToolResult
from tests.cli.http_process import Running, group_gone, mcpkit_http
from tests.http.servers import ACCEPT, INITIALIZE, status_becomes
from tests.peers import redis_server

SERVER = Path(__file__).with_name("drain_workers_server.py")
HELD, RELEASE = "drain-test:held", "drain-test:release"
KEYS = {"MCPKIT_REQUEST_STATE_KEYS": "drain-workers-tests-key-1"}

pytestmark = pytest.mark.timeout(300)  # worker processes start slowly on a loaded machine


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    with redis_server() as url:
        yield url


@pytest.fixture
async def store(redis_url: str) -> AsyncIterator[redis.Redis]:
    client = redis.Redis.from_url(redis_url)
    await client.delete(HELD, RELEASE)
    yield client
    await client.aclose()


def run_workers(redis_url: str, *more: str) -> list[str]:
    return ["run", str(SERVER), "--transport", "http", "--redis", redis_url,
            "--workers", "2", *more]  # fmt: skip


async def held(store: redis.Redis) -> int:
    return sum(int(count) for count in (await store.hvals(HELD)))


async def hold_on_every_worker(
    client: Client, store: redis.Redis, workers: int
) -> list[asyncio.Future[CallToolResult]]:
    """Calls of `hold` started one by one (each on a connection of its own: the others are
    busy) until every worker holds at least one."""
    calls: list[asyncio.Future[CallToolResult]] = []
    while await store.hlen(HELD) < workers:
        assert len(calls) < 40, "the calls all landed on one worker"
        calls.append(asyncio.ensure_future(client.call_tool("hold", {})))
        while await held(store) < len(calls):
            await asyncio.sleep(0.02)
    return calls


async def pinned_to_each_worker(
    stack: contextlib.AsyncExitStack, base: str, workers: int
) -> list[httpx.AsyncClient]:
    """An HTTP client per worker, each on one kept-alive connection: every request it sends
    reaches the same worker (a new connection goes to whichever worker accepts it first).
    One session asks each connection which worker it reached (sessions live in Redis)."""
    url = f"{base}/mcp"
    async with httpx.AsyncClient(timeout=10) as http:
        opened = await http.post(url, json=INITIALIZE, headers=ACCEPT)
        session = {**ACCEPT, "mcp-session-id": opened.headers["mcp-session-id"],
                   "mcp-protocol-version": "2025-11-25"}  # fmt: skip
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert (await http.post(url, json=note, headers=session)).status_code == 202
    pinned: dict[str, httpx.AsyncClient] = {}
    for _ in range(40):
        http = await stack.enter_async_context(
            httpx.AsyncClient(timeout=10, limits=httpx.Limits(max_connections=1))
        )
        pinned.setdefault(await worker_of(http, url, session), http)
        if len(pinned) == workers:
            return list(pinned.values())
    raise AssertionError("every connection landed on the same worker")


async def worker_of(http: httpx.AsyncClient, url: str, session: dict[str, str]) -> str:
    """The worker at the other end of `http`'s connection."""
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "worker", "arguments": {}}}  # fmt: skip
    answer = await http.post(url, json=call, headers=session)
    body = answer.text
    if answer.headers["content-type"].startswith("text/event-stream"):
        body = [line for line in body.splitlines() if line.startswith("data:")][-1][5:]
    return str(json.loads(body)["result"]["content"][0]["text"])


async def assert_draining(http: httpx.AsyncClient, base: str) -> None:
    """Readiness 503 and a new GET stream refused with 503 + Retry-After, on `http`'s worker
    (probed as an orchestrator does, every 50 ms, until it drains); a new session is still
    opened there (it lives in Redis: the other workers serve it once this one has gone)."""
    deadline = time.monotonic() + 30
    while (ready := await http.get(f"{base}/readyz")).status_code != 503:
        assert time.monotonic() < deadline, ready
        await asyncio.sleep(0.05)
    assert ready.json() == {"status": "draining"}
    opened = await http.post(f"{base}/mcp", json=INITIALIZE, headers=ACCEPT)
    assert opened.status_code == 200, opened.text
    session = {"mcp-session-id": opened.headers["mcp-session-id"],
               "mcp-protocol-version": "2025-11-25"}  # fmt: skip
    stream = await http.get(f"{base}/mcp", headers={"accept": "text/event-stream", **session})
    assert stream.status_code == 503
    assert stream.headers["retry-after"] == "1"
    assert "shutting down" in stream.json()["error"]["message"]


async def exited(running: Running, seconds: float) -> None:
    """The parent exited with 0 and no process of its group is left."""
    assert await asyncio.wait_for(running.process.wait(), seconds) == 0
    assert await group_gone(running.process.pid, 10)


async def test_each_worker_drains_answers_its_calls_and_the_group_exits(
    redis_url: str, store: redis.Redis
) -> None:
    env = {**KEYS, "DRAIN_TEST_REDIS": redis_url}
    args = run_workers(redis_url, "--drain-timeout", "30")
    async with mcpkit_http(args, env=env) as running:
        url = f"{running.base}/mcp"
        async with (
            contextlib.AsyncExitStack() as stack,
            Client(url, mode="handshake", timeout=60) as client,
        ):
            calls = await hold_on_every_worker(client, store, workers=2)
            pinned = await pinned_to_each_worker(stack, running.base, workers=2)
            async with Client(url, mode="2026-07-28", timeout=60) as modern:
                async with modern.listen(tools=True) as changes:
                    running.process.terminate()  # the parent alone, as to a container's PID 1
                    for http in pinned:
                        await assert_draining(http, running.base)
                    seen = [note async for note in changes]  # ended by the drain, gracefully
                assert seen == []
            await store.rpush(RELEASE, *["go"] * len(calls))
            answers = await asyncio.wait_for(asyncio.gather(*calls), 60)
        assert len({answer.content[0].text for answer in answers}) == 2  # both workers' calls
        await exited(running, 60)


async def test_a_call_that_does_not_finish_is_cut_within_the_bound(
    redis_url: str, store: redis.Redis
) -> None:
    env = {**KEYS, "DRAIN_TEST_REDIS": redis_url}
    async with (
        mcpkit_http(run_workers(redis_url, "--drain-timeout", "1"), env=env) as running,
        Client(f"{running.base}/mcp", mode="handshake", timeout=60) as client,
    ):
        call = asyncio.ensure_future(client.call_tool("hold", {}))
        while await held(store) < 1:
            await asyncio.sleep(0.02)
        started = time.monotonic()
        running.process.terminate()
        await exited(running, 60)
        # drain_timeout (1 s) for the calls, as long again for uvicorn's own wait, and the
        # parent's half-second look at its workers
        assert time.monotonic() - started < 2 * 1 + 4
        with pytest.raises(Exception):  # noqa: B017 - the connection ended, whichever way
            await asyncio.wait_for(call, 30)


async def test_proxy_workers_drain_too(redis_url: str, store: redis.Redis) -> None:
    env = {**KEYS, "DRAIN_TEST_REDIS": redis_url, "DRAIN_TEST_BEHIND_PROXY": "1"}
    args = ["proxy", str(SERVER), "--transport", "http", "--redis", redis_url, "--workers", "2"]
    async with (
        mcpkit_http(args, env=env) as running,
        contextlib.AsyncExitStack() as stack,
        Client(f"{running.base}/mcp", mode="handshake", timeout=60) as client,
    ):
        calls = await hold_on_every_worker(client, store, workers=2)
        pinned = await pinned_to_each_worker(stack, running.base, workers=2)
        running.process.terminate()
        for http in pinned:
            await assert_draining(http, running.base)
        await store.rpush(RELEASE, *["go"] * len(calls))
        answers = await asyncio.wait_for(asyncio.gather(*calls), 60)
        assert len({answer.content[0].text for answer in answers}) == 2  # both workers' calls
        await exited(running, 60)


def command(argv: list[str]) -> subprocess.CompletedProcess[str]:
    """`argv` run to its end with the workers' keys; its output as text."""
    env = {**os.environ, **KEYS}
    return subprocess.run(argv, check=False, capture_output=True, text=True, env=env, timeout=120)


def test_workers_on_a_port_in_use_say_so(redis_url: str) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        argv = [sys.executable, "-m", "mcpkit", *run_workers(redis_url), "--port", str(port)]
        done = command(argv)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == (
        f"mcpkit: error: cannot listen on 127.0.0.1:{port}: Address already in use"
    )


def workers_of(parent: int) -> set[int]:
    """The worker processes `parent` started (not multiprocessing's resource tracker)."""
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            fields = stat.read_text().rpartition(")")[2].split()
            command = (stat.parent / "cmdline").read_bytes()
            if int(fields[1]) == parent and fields[0] != "Z" and b"spawn_main" in command:
                found.add(int(stat.parent.name))
    return found


async def test_a_worker_that_dies_is_replaced(redis_url: str) -> None:
    async with mcpkit_http(run_workers(redis_url), env=KEYS) as running:
        first = workers_of(running.process.pid)
        assert len(first) == 2
        os.kill(min(first), signal.SIGKILL)
        deadline = time.monotonic() + 60
        while min(first) in (now := workers_of(running.process.pid)) or len(now) < 2:
            assert time.monotonic() < deadline, now
            await asyncio.sleep(0.05)
        assert max(first) in now and min(first) not in now
        await status_becomes(f"{running.base}/readyz", 200)
        async with Client(f"{running.base}/mcp", mode="handshake", timeout=60) as client:
            for _ in range(4):  # on new connections too: whichever worker takes them
                assert int((await client.call_tool("worker", {})).content[0].text) in now
        running.process.terminate()
        await exited(running, 60)


def test_a_worker_that_cannot_start_stops_the_command() -> None:
    """A worker whose app fails at startup (its Redis refuses connections): the others are
    stopped and the command exits 3 (uvicorn's startup failure), not started again forever."""
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        nowhere = f"redis://127.0.0.1:{closed.getsockname()[1]}/0"  # bound, not listening
        argv = [sys.executable, "-m", "mcpkit", *run_workers(nowhere), "--port", "0"]
        done = command(argv)
    assert done.returncode == 3, done.stderr
    assert "failed to start: stopping" in done.stderr
