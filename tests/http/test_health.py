"""Liveness and readiness of `mcpkit run --transport http` (real uvicorn in a subprocess, a
real redis-server), and what SIGTERM does: readiness 503 while draining, new sessions and
streams refused with 503 + Retry-After, the tool calls in flight finished."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest

from mcpkit import Client, Server
from mcpkit.errors import ProtocolError
from mcpkit.transports.http.health import StateProbe
from tests.clock import FakeClock

from .servers import ACCEPT, INITIALIZE, status_becomes, unused_port

SERVER = Path(__file__).with_name("health_server.py")
ROOT = Path(__file__).resolve().parents[2]


@contextlib.asynccontextmanager
async def running(*more: str) -> AsyncIterator[tuple[asyncio.subprocess.Process, str]]:
    """`mcpkit run health_server.py --transport http` on an unused port, answering; yields the
    process and its base URL."""
    port = unused_port()
    argv = [sys.executable, "-m", "mcpkit", "run", str(SERVER), "--transport", "http",
            "--port", str(port), *more]  # fmt: skip
    env = {**os.environ, "MCPKIT_REQUEST_STATE_KEYS": "health-tests-key-1"}
    process = await asyncio.create_subprocess_exec(*argv, cwd=ROOT, env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        await answering(f"{base}/healthz", process)
        yield process, base
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def answering(url: str, process: asyncio.subprocess.Process) -> None:
    deadline = time.monotonic() + 60
    async with httpx.AsyncClient() as http:
        while True:
            try:
                await http.get(url)
                return
            except httpx.TransportError:
                if process.returncode is not None or time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.05)


async def in_flight(client: Client, count: int) -> None:
    """Until the server holds `count` calls of `slow`."""
    while (await client.call_tool("in_flight", {})).structured_content != {"result": count}:
        await asyncio.sleep(0.02)


async def test_probes_answer_without_auth_and_whatever_the_host() -> None:
    async with running() as (_, base), httpx.AsyncClient(timeout=10) as http:
        # a kubelet probes with the pod's IP as Host: the MCP path refuses that Host
        pod = {"host": "10.1.2.3:8080"}
        assert (await http.get(f"{base}/mcp", headers=pod)).status_code == 421
        live = await http.get(f"{base}/healthz", headers=pod)
        assert (live.status_code, live.json()) == (200, {"status": "ok"})
        ready = await http.get(f"{base}/readyz", headers=pod)
        assert (ready.status_code, ready.json()) == (200, {"status": "ready"})
        assert ready.headers["cache-control"] == "no-store"
        assert (await http.post(f"{base}/healthz")).status_code == 405


async def test_probe_paths_are_options_of_mcpkit_run() -> None:
    paths = ("--health-path", "/live", "--ready-path", "")
    async with running(*paths) as (_, base), httpx.AsyncClient(timeout=10) as http:
        assert (await http.get(f"{base}/live")).json() == {"status": "ok"}
        assert (await http.get(f"{base}/readyz")).status_code == 404
        assert (await http.get(f"{base}/healthz")).status_code == 404


async def test_sigterm_drains_readiness_503_new_sessions_refused_calls_finish() -> None:
    async with running("--drain-timeout", "20") as (process, base):
        url = f"{base}/mcp"
        async with Client(url, mode="handshake", timeout=30) as client:
            call = asyncio.ensure_future(client.call_tool("slow", {}))
            await in_flight(client, 1)
            process.send_signal(signal.SIGTERM)
            ready = await status_becomes(f"{base}/readyz", 503)
            assert (ready.status_code, ready.json()) == (503, {"status": "draining"})
            async with httpx.AsyncClient(timeout=10) as http:
                refused = await http.post(url, json=INITIALIZE, headers=ACCEPT)
                assert refused.status_code == 503
                assert refused.headers["retry-after"] == "1"
                assert "shutting down" in refused.json()["error"]["message"]
            # a 2026-07-28 subscription would hold the exit until the bound: refused too
            async with Client(url, mode="2026-07-28", timeout=30) as modern:
                with pytest.raises(ProtocolError, match="shutting down"):
                    async with modern.listen(tools=True):
                        pass
            # the existing session is still served while the server drains
            assert (await client.call_tool("release", {})).content[0].text == "released"
            result = await asyncio.wait_for(call, 30)
            assert result.content[0].text == "finished"
        assert await asyncio.wait_for(process.wait(), 30) in (0, -signal.SIGTERM)


async def test_sigterm_ends_within_the_bound_a_call_that_does_not_finish() -> None:
    async with (
        running("--drain-timeout", "1") as (process, base),
        Client(f"{base}/mcp", mode="handshake", timeout=30) as client,
    ):
        call = asyncio.ensure_future(client.call_tool("slow", {}))
        await in_flight(client, 1)
        started = time.monotonic()
        process.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(process.wait(), 30) in (0, -signal.SIGTERM)
        # drain_timeout (1 s) for the calls, as long again for uvicorn's own wait
        assert time.monotonic() - started < 2 * 1 + 3
        with pytest.raises(Exception):  # noqa: B017 - the connection ended, whichever way
            await asyncio.wait_for(call, 10)


async def test_a_call_cut_by_the_drain_timeout_is_answered_with_a_json_rpc_error() -> None:
    """Not uvicorn's bare `500 text/plain` when it cancels the response: the request's own
    answer, an error saying the server is shutting down, in both eras."""
    async with (
        running("--drain-timeout", "1") as (process, base),
        httpx.AsyncClient(timeout=30) as http,
        Client(f"{base}/mcp", mode="handshake", timeout=30) as probe,
        Client(f"{base}/mcp", mode="2026-07-28", timeout=30) as modern,
    ):
        url = f"{base}/mcp"
        opened = await http.post(url, json=INITIALIZE, headers=ACCEPT)
        session = {**ACCEPT, "mcp-session-id": opened.headers["mcp-session-id"],
                   "mcp-protocol-version": "2025-11-25"}  # fmt: skip
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert (await http.post(url, json=note, headers=session)).status_code == 202
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "slow", "arguments": {}}}  # fmt: skip
        raw = asyncio.ensure_future(http.post(url, json=call, headers=session))
        streamed = {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                    "params": {"name": "slow_steps", "arguments": {},
                               "_meta": {"progressToken": "p"}}}  # fmt: skip
        events = asyncio.ensure_future(http.post(url, json=streamed, headers=session))
        per_request = asyncio.ensure_future(modern.call_tool("slow", {}))
        await in_flight(probe, 3)
        process.send_signal(signal.SIGTERM)
        answer = await asyncio.wait_for(raw, 30)
        assert answer.status_code == 200, answer.text
        assert answer.headers["content-type"] == "application/json"
        error = answer.json()["error"]
        assert answer.json()["id"] == 2 and error["code"] == -32000
        assert "shutting down" in error["message"]
        stream = await asyncio.wait_for(events, 30)  # already an event stream: it ends so
        assert stream.headers["content-type"] == "text/event-stream"
        data = [json.loads(line[5:]) for line in stream.text.splitlines()
                if line.startswith("data:") and line[5:].strip()]  # fmt: skip
        assert data[0]["method"] == "notifications/progress"
        assert data[-1]["id"] == 3 and "shutting down" in data[-1]["error"]["message"]
        with pytest.raises(ProtocolError, match="shutting down"):
            await asyncio.wait_for(per_request, 30)
        assert await asyncio.wait_for(process.wait(), 30) in (0, -signal.SIGTERM)


@contextlib.contextmanager
def redis_on(port: int) -> Iterator[subprocess.Popen[bytes]]:
    """A real redis-server on `port` (no persistence), answering; stopped at the end."""
    argv = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
            "--appendonly", "no"]  # fmt: skip
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while subprocess.run(["redis-cli", "-p", str(port), "ping"], capture_output=True,
                             check=False).stdout.strip() != b"PONG":  # fmt: skip
            if time.monotonic() > deadline or process.poll() is not None:
                raise RuntimeError("redis-server did not start")
            time.sleep(0.02)
        yield process
    finally:
        process.terminate()
        process.wait(10)


async def test_readiness_follows_redis_and_liveness_does_not() -> None:
    if not os.path.exists("/usr/bin/redis-server"):
        pytest.skip("redis-server is not installed; run `bash scripts/system-packages.sh`")
    port = unused_port()
    redis = f"redis://127.0.0.1:{port}/0"
    with redis_on(port):
        async with running("--redis", redis) as (_, base):
            ready = await status_becomes(f"{base}/readyz", 200)
            assert ready.json() == {"status": "ready"}
            # stopped below, then started again on the same port
    with redis_on(port) as first:
        async with running("--redis", redis) as (_, base):
            assert (await status_becomes(f"{base}/readyz", 200)).status_code == 200
            first.terminate()
            first.wait(10)
            down = await status_becomes(f"{base}/readyz", 503)
            assert (down.status_code, down.json()) == (503, {"status": "unavailable"})
            live = await status_becomes(f"{base}/healthz", 200)
            assert live.json() == {"status": "ok"}  # no restart for a Redis outage
            with redis_on(port):
                back = await status_becomes(f"{base}/readyz", 200)
                assert (back.status_code, back.json()) == (200, {"status": "ready"})


class Checks:
    """A state check that counts its calls and answers when the test releases it."""

    def __init__(self) -> None:
        self.calls = 0
        self.answer: asyncio.Future[None] | None = None
        self.fail = False

    async def __call__(self) -> None:
        self.calls += 1
        self.answer = asyncio.get_running_loop().create_future()
        await self.answer
        if self.fail:
            raise ConnectionRefusedError("refused")


async def test_state_probe_answers_once_per_ttl_and_shares_one_check() -> None:
    clock = FakeClock(0)
    checks = Checks()
    probe = StateProbe(checks, ttl=1.0, timeout=30, clock=clock)
    together = [asyncio.ensure_future(probe.reachable()) for _ in range(5)]
    while checks.answer is None:
        await asyncio.sleep(0)
    checks.answer.set_result(None)
    assert await asyncio.gather(*together) == [True] * 5
    assert checks.calls == 1  # five probes, one round trip
    clock.advance(0.9)
    assert await probe.reachable() is True
    assert checks.calls == 1  # kept for the ttl
    clock.advance(0.2)
    checks.fail = True
    again = asyncio.ensure_future(probe.reachable())
    while checks.calls < 2 or checks.answer is None or checks.answer.done():
        await asyncio.sleep(0)
    checks.answer.set_result(None)
    assert await again is False


async def test_state_probe_bounds_a_check_that_hangs() -> None:
    checks = Checks()
    probe = StateProbe(checks, ttl=1.0, timeout=0.05, clock=FakeClock(0))
    assert await probe.reachable() is False  # Redis paused: no answer within the bound


async def test_probes_in_process_head_and_the_mcp_path_refused() -> None:
    server = Server("probes")
    app = server.http_app()
    transport = httpx.ASGITransport(app)
    async with httpx.AsyncClient(transport=transport, base_url="http://10.0.0.9") as http:
        head = await http.head("/readyz")
        assert (head.status_code, head.content) == (200, b"")
        await app.drain()
        ready = await http.get("/readyz")
        assert (ready.status_code, ready.json()) == (503, {"status": "draining"})
        assert (await http.get("/healthz")).status_code == 200  # alive while draining
        stream = await http.get("/mcp", headers={"accept": "text/event-stream"})
        assert (stream.status_code, stream.headers["retry-after"]) == (503, "1")
        await app.stop()
        # stopped and started again (an app entered twice): it serves again
        assert (await http.get("/readyz")).json() == {"status": "ready"}
    await app.stop()
    with pytest.raises(ValueError, match="probe path"):
        server.http_app(health_path="/mcp")
    with pytest.raises(ValueError, match="probe path"):
        server.http_app(ready_path="readyz")
