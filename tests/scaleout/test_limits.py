"""What holds across workers without a load balancer's help: idle expiry (a Redis TTL every
request refreshes), the session cap (counted in Redis), DELETE; the Redis round trips of a
stateful tools/call; and a server-to-client request, which is refused at once (not routed
between workers yet) instead of waiting for an answer that may reach another worker."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import redis.asyncio

from mcpkit.transports.http.redis_state import RedisState
from tests.clock import FakeClock
from tests.http.servers import serving, unused_port, wait_until_listening
from tests.scaleout.app import server
from tests.scaleout.conftest import processes, script_worker
from tests.scaleout.test_resumption import ACCEPT, VERSION, open_session


@contextlib.contextmanager
def two_workers(redis_url: str, prefix: str, idle: float, cap: int) -> Iterator[list[str]]:
    ports = [unused_port(), unused_port()]
    with processes([script_worker(p, redis_url, prefix, idle, cap) for p in ports]):
        urls = [f"http://127.0.0.1:{port}/mcp" for port in ports]
        for url in urls:
            wait_until_listening(url, 20)
        yield urls


async def ping(http: httpx.AsyncClient, url: str, headers: dict[str, str]) -> int:
    message = {"jsonrpc": "2.0", "id": 9, "method": "ping"}
    return (await http.post(url, json=message, headers=headers)).status_code


async def test_idle_expiry_and_the_cap_hold_across_workers(redis_url: str) -> None:
    prefix = "limits:"
    with two_workers(redis_url, prefix, idle=1.0, cap=2) as (a, b):
        async with httpx.AsyncClient(timeout=10) as http:
            first = await open_session(http, a)
            assert await ping(http, b, first) == 200  # b rebuilds it from Redis
            second = await open_session(http, b)
            init = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {}},
            }
            refused = await http.post(a, json=init, headers={"accept": ACCEPT})
            assert refused.status_code == 503  # two live sessions, made on two workers
            assert (await http.delete(a, headers=second)).status_code == 200  # b's session
            assert await ping(http, b, second) == 404
            await open_session(http, a)  # the DELETE made room

            store = redis.asyncio.Redis.from_url(redis_url)
            try:
                key = f"{prefix}session:{first['mcp-session-id']}"
                for _ in range(300):  # idle: Redis expires it (1 s after its last request)
                    if not await store.exists(key):
                        break
                    await asyncio.sleep(0.02)
                else:
                    raise AssertionError("the idle session never expired")
            finally:
                await store.aclose()
            assert [await ping(http, url, first) for url in (a, b)] == [404, 404]


class CountingConnection(redis.asyncio.Connection):
    """A real connection to Redis that counts what it sends: one send is one round trip (a
    pipeline or a script is one send)."""

    sent = 0

    async def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        CountingConnection.sent += 1
        await super().send_packed_command(command, check_health)


async def test_a_stateful_json_tools_call_costs_no_redis_round_trip(redis_url: str) -> None:
    """On the worker that holds the session, a tools/call answered as JSON costs no round
    trip to Redis while the copy was checked lately (the sweeper checks every copy once a
    period, in one round trip for all), and one (the touch script) once it was not."""
    clock = FakeClock()
    pool = redis.asyncio.ConnectionPool.from_url(redis_url, connection_class=CountingConnection)
    client = redis.asyncio.Redis(connection_pool=pool)
    state = RedisState(client=client, prefix="trips:", clock=clock)
    app = server.http_app(state=state, response_mode="json")
    sessions: Any = app.sessions
    sessions.trusted = 3600.0  # the sweeper waits this long: only requests talk to Redis
    async with serving(app) as base, httpx.AsyncClient() as http:
        url = base + "/mcp"
        headers = await open_session(http, url)
        call = {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "which_worker", "arguments": {}},
        }
        before = CountingConnection.sent
        for _ in range(10):
            answer = await http.post(url, json=call, headers=headers)
            assert answer.headers["content-type"] == "application/json"
        assert CountingConnection.sent - before == 0
        clock.advance(3601)  # not checked for longer than it trusts a copy
        assert (await http.post(url, json=call, headers=headers)).status_code == 200
        assert CountingConnection.sent - before == 1
    await pool.aclose()


def test_mcpkit_run_workers_serves_one_port_from_several_processes(redis_url: str) -> None:
    port = unused_port()
    argv = [sys.executable, "-m", "mcpkit", "run", "tests/scaleout/app.py", "--transport",
            "http", "--port", str(port), "--redis", redis_url, "--workers", "2"]  # fmt: skip
    url = f"http://127.0.0.1:{port}/mcp"
    with processes([argv]):
        wait_until_listening(url, 30)
        pids = set()
        for _ in range(60):  # each call a new connection: the kernel spreads them
            with httpx.Client(timeout=10) as http:
                headers = asyncio.run(_session(url))
                call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                        "params": {"name": "which_worker", "arguments": {}}}  # fmt: skip
                answer = http.post(url, json=call, headers=headers)
                assert answer.status_code == 200
                pids.add(answer.json()["result"]["content"][0]["text"])
            if len(pids) == 2:
                break
    assert len(pids) == 2 and str(os.getpid()) not in pids


async def _session(url: str) -> dict[str, str]:
    async with httpx.AsyncClient(timeout=10) as http:
        return await open_session(http, url)


def test_workers_without_redis_is_a_usage_error() -> None:
    argv = [sys.executable, "-m", "mcpkit", "run", "tests/scaleout/app.py", "--transport",
            "http", "--workers", "2"]  # fmt: skip
    done = subprocess.run(argv, check=False, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "--workers needs --redis" in done.stderr


@pytest.mark.parametrize("code", ["import mcpkit", "import mcpkit.server"])
def test_the_local_state_imports_no_redis(code: str) -> None:
    script = (
        f"{code}\nimport sys\nfrom mcpkit import Server\n"
        "Server('s').http_app()\nprint('redis' in sys.modules)"
    )
    argv = [sys.executable, "-c", script]
    done = subprocess.run(argv, check=False, capture_output=True, text=True)
    assert done.stdout.strip() == "False", done.stderr
