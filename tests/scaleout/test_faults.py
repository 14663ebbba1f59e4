"""Redis and workers failing under a scale-out service, with real parts: a redis-server of
each test's own (stopped, paused, killed and restarted at will, with a password, so that the
tests can check it never reaches a log or an answer), worker processes of
tests/scaleout/fault_worker.py (a Redis timeout of 1 s), and haproxy in front of two of them.

What the clients see is printed (run with -s to read it); docs/scale-out.md ("When Redis
fails") reports it."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
import redis.asyncio

from mcpkit import Client
from mcpkit.client import HTTPOptions
from mcpkit.errors import ConnectionClosed, MCPError
from mcpkit.stores.redis_client import StateUnavailable, connect
from mcpkit.stores.redis_events import RedisEventStore
from tests.http.servers import unused_port, wait_until_listening
from tests.scaleout.conftest import ROOT, haproxy
from tests.scaleout.test_resumption import ACCEPT, VERSION, events, open_session

WORKER = Path(__file__).with_name("fault_worker.py")
Worker = subprocess.Popen[bytes]
PASSWORD = "fault-tests-secret-7f3a"
TIMEOUT = 1.0  # the workers' Redis timeout
TRUSTED = 1.0  # RedisSessions.trusted with the default cache_idle
BOUND = TIMEOUT + 2.0  # a request answers (or gets 503) within this, however Redis fails
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "t"}},
}


class FaultRedis:
    """A redis-server on a fixed loopback port that a test stops, kills and starts again
    (on the same port, in the same directory: with `appendonly`, it reloads its AOF)."""

    def __init__(self, directory: Path, appendfsync: str | None = None) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            message = "redis-server is not installed; run `bash scripts/system-packages.sh`"
            if os.environ.get("CI"):
                pytest.fail(message)
            pytest.skip(message)
        self.port = unused_port()
        self.argv = [binary, "--port", str(self.port), "--bind", "127.0.0.1",
                     "--dir", str(directory), "--save", "", "--requirepass", PASSWORD]  # fmt: skip
        if appendfsync is None:
            self.argv += ["--appendonly", "no"]
        else:
            self.argv += ["--appendonly", "yes", "--appendfsync", appendfsync]
        self.url = f"redis://:{PASSWORD}@127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Start it and return once it answers PING (its AOF loaded)."""
        self.process = subprocess.Popen(
            self.argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + 10
        while not self._answers():
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise RuntimeError("redis-server did not start")
            time.sleep(0.02)

    def _answers(self) -> bool:
        """Whether it answers PING (after AUTH): not while it loads its AOF (-LOADING)."""
        try:
            with socket.create_connection(("127.0.0.1", self.port), 1) as conn:
                conn.sendall(f"AUTH {PASSWORD}\r\nPING\r\n".encode())
                seen = b""
                while seen.count(b"\r\n") < 2:
                    chunk = conn.recv(64)
                    if not chunk:
                        return False
                    seen += chunk
        except OSError:
            return False
        return seen.endswith(b"+PONG\r\n")

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(sig)
            self.process.wait(10)
        self.process = None

    def client(self) -> Any:
        return redis.asyncio.Redis.from_url(self.url)


@pytest.fixture
def fault_redis(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[FaultRedis]:
    server = FaultRedis(tmp_path, getattr(request, "param", None))
    server.start()
    try:
        yield server
    finally:
        server.stop()


@contextlib.contextmanager
def workers(redis_url: str, count: int, log: Path) -> Iterator[list[tuple[str, Worker]]]:
    """`count` fault workers on `redis_url`, their log (stderr) in `log`; yields each one's
    (/mcp URL, process)."""
    ports = [unused_port() for _ in range(count)]
    with log.open("wb") as sink:
        started = [
            subprocess.Popen(
                [sys.executable, str(WORKER), str(port), redis_url, str(TIMEOUT)],
                cwd=ROOT,
                stderr=sink,
            )
            for port in ports
        ]
        try:
            urls = [f"http://127.0.0.1:{port}/mcp" for port in ports]
            for url in urls:
                wait_until_listening(url, 20)
            yield list(zip(urls, started, strict=True))
        finally:
            for process in started:
                if process.poll() is None:
                    process.terminate()
            for process in started:
                process.wait(10)


@contextlib.contextmanager
def balanced(redis_url: str, log: Path) -> Iterator[tuple[str, dict[int, Worker]]]:
    """Two fault workers behind haproxy (round robin); yields haproxy's /mcp URL and the
    workers by process id."""
    with workers(redis_url, 2, log) as started:
        ports = [int(url.rsplit(":", 1)[1].split("/")[0]) for url, _ in started]
        with haproxy(ports) as url:
            yield url, {process.pid: process for _, process in started}


def tool_call(request_id: int, name: str = "which_worker", **arguments: Any) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


async def timed(answer: Awaitable[httpx.Response]) -> tuple[float, httpx.Response]:
    started = time.monotonic()
    response = await answer
    return time.monotonic() - started, response


def assert_unavailable(response: httpx.Response) -> None:
    """A 503 saying the session store is unavailable, with Retry-After; no password."""
    assert response.status_code == 503, (response.status_code, response.text)
    assert response.headers["retry-after"] == "1"
    error = response.json()["error"]
    assert error["code"] == -32603
    assert "the session store is unavailable (Redis: " in error["message"]
    assert "retry" in error["message"]
    assert PASSWORD not in response.text


# -- Redis stopped ---------------------------------------------------------------------------


async def test_a_stopped_redis_answers_503_within_the_bound_then_new_sessions_work(
    fault_redis: FaultRedis, tmp_path: Path
) -> None:
    log = tmp_path / "workers.log"
    with workers(fault_redis.url, 1, log) as [(url, _)]:
        async with httpx.AsyncClient(timeout=30) as http:
            headers = await open_session(http, url)
            assert (await http.post(url, json=tool_call(2), headers=headers)).status_code == 200

            fault_redis.stop()
            # A copy checked in Redis less than a period ago is served without asking it;
            # past that, each request asks (and the sweeper fails): wait the period out.
            await asyncio.sleep(TRUSTED + 0.3)
            answers = [
                await timed(http.post(url, json=tool_call(3), headers=headers)),
                await timed(http.post(url, json=INIT, headers={"accept": ACCEPT})),
                await timed(http.get(url, headers=headers)),
                await timed(http.delete(url, headers=headers)),
            ]
            for elapsed, answer in answers:
                print(f"Redis stopped: {answer.status_code} in {elapsed:.3f} s: {answer.text}")
                assert_unavailable(answer)
                assert elapsed < BOUND

            fault_redis.start()  # no persistence: the old session is gone, new ones work
            answer = await http.post(url, json=tool_call(4), headers=headers)
            print(f"the old session after the restart: {answer.status_code}")
            assert answer.status_code == 404
            headers = await open_session(http, url)
            assert (await http.post(url, json=tool_call(5), headers=headers)).status_code == 200
    assert PASSWORD not in log.read_text()


async def test_a_stream_goes_on_when_redis_stops_and_the_log_says_so_once(
    fault_redis: FaultRedis, tmp_path: Path
) -> None:
    """The events of a stream already open cannot be stored once Redis stops: the stream
    goes on all the same, and the worker logs it once (not once per event or burst), then
    once more when storing works again."""
    log = tmp_path / "workers.log"
    with workers(fault_redis.url, 1, log) as [(url, _)]:
        async with httpx.AsyncClient(timeout=30) as http:
            headers = await open_session(http, url)
            call = tool_call(2, "steps", count=8, pause=0.2)
            call["params"]["_meta"] = {"progressToken": "p"}
            progress: list[int] = []
            answer: dict[str, Any] | None = None
            async with http.stream("POST", url, json=call, headers=headers) as response:
                assert response.status_code == 200
                async for line in response.aiter_lines():
                    if not line.startswith("data: ") or line == "data: ":
                        continue
                    message = orjson.loads(line[6:])
                    if message.get("method") == "notifications/progress":
                        progress.append(message["params"]["progress"])
                        if len(progress) == 1:
                            fault_redis.stop()
                    elif message.get("id") == 2:
                        answer = message
            assert progress == [1, 2, 3, 4, 5, 6, 7, 8]
            assert answer is not None and "8 steps on" in answer["result"]["content"][0]["text"]

            fault_redis.start()
            headers = await open_session(http, url)  # its priming event is stored: logged
            await http.post(url, json=call, headers=headers)
    text = log.read_text()
    print(text)
    assert text.count("SSE events are not being stored") == 1
    assert text.count("SSE events are stored again") == 1
    assert PASSWORD not in text


# -- Redis paused ----------------------------------------------------------------------------


async def test_requests_during_client_pause_succeed_late_or_get_503_none_past_the_bound(
    fault_redis: FaultRedis, tmp_path: Path
) -> None:
    log = tmp_path / "workers.log"
    seen: list[tuple[float, float, int]] = []  # (sent after the pause began, took, status)
    with workers(fault_redis.url, 1, log) as [(url, _)]:
        async with httpx.AsyncClient(timeout=30) as http:
            headers = await open_session(http, url)
            control = fault_redis.client()
            try:
                await control.client_pause(2500, all=True)
                paused = time.monotonic()
                request_id = 2
                while time.monotonic() - paused < 3.5:  # through the pause, and after
                    sent = time.monotonic() - paused
                    elapsed, answer = await timed(
                        http.post(url, json=tool_call(request_id), headers=headers)
                    )
                    request_id += 1
                    seen.append((sent, elapsed, answer.status_code))
                    if answer.status_code != 200:
                        assert_unavailable(answer)
            finally:
                await control.aclose()
    for sent, elapsed, status in seen[:5]:
        print(f"CLIENT PAUSE 2500 ALL: sent at +{sent:.2f} s, {status} in {elapsed:.3f} s")
    later = {status for *_, status in seen[5:]}
    print(f"... then {len(seen) - 5} more, all {later}")
    assert all(elapsed < BOUND for _, elapsed, _ in seen)
    # A copy checked less than a period ago is served without Redis; then requests ask it,
    # and time out (503 after TIMEOUT s) instead of being held for the pause.
    assert any(status == 503 for *_, status in seen)
    assert all(sent < 2.5 for sent, _, status in seen if status == 503)
    assert all(status == 200 for sent, _, status in seen if sent > 2.6)  # once it lifted
    assert PASSWORD not in log.read_text()


async def test_flush_waits_for_what_was_buffered_not_for_later_bursts(
    fault_redis: FaultRedis,
) -> None:
    """A resume (`replay_after`) first flushes this worker's buffered events. With Redis
    paused and a stream still producing, that wait ends once the bursts buffered until then
    have failed (two timeouts at most), not when the stream stops."""
    client = connect(fault_redis.url, timeout=TIMEOUT)
    store = RedisEventStore(client, prefix="flush-test:")
    control = fault_redis.client()
    producing = True

    async def produce() -> None:
        n = 0
        while producing:
            n += 1
            store.append("s", f"1.{n}", b"{}")
            await asyncio.sleep(0.05)  # a stream's pace

    try:
        await control.client_pause(8000, all=True)
        producer = asyncio.ensure_future(produce())
        await asyncio.sleep(0.2)  # a few bursts in flight
        elapsed, _ = await timed(store.flush())
        producing = False
        await producer
        print(f"flush with Redis paused and a stream producing: {elapsed:.3f} s")
        assert elapsed < 2 * TIMEOUT + 1.0
        with pytest.raises(StateUnavailable):
            await store.replay_after("s", "1.1")
    finally:
        producing = False
        await control.client_unpause()
        await control.aclose()
        await client.aclose()


# -- a worker killed mid-stream --------------------------------------------------------------


async def stored_progress(control: Any) -> list[float]:
    """The progress values of every stored event (one session in this Redis)."""
    found: list[float] = []
    for key in await control.keys("mcpkit:http:events:*"):
        for _, fields in await control.xrange(key):
            if b"notifications/progress" in fields[b"d"]:
                found.append(orjson.loads(fields[b"d"])["params"]["progress"])
    return found


def stored_at_least(url: str, count: int) -> None:
    """Block until `count` progress events are stored (bounded)."""
    import redis as sync_redis

    control = sync_redis.Redis.from_url(url)
    deadline = time.monotonic() + 20
    try:
        while time.monotonic() < deadline:
            found = 0
            for key in control.keys("mcpkit:http:events:*"):
                found += sum(b"progress" in f[b"d"] for _, f in control.xrange(key))
            if found >= count:
                return
            time.sleep(0.02)
        raise AssertionError(f"{count} progress events were never stored")
    finally:
        control.close()


async def test_a_worker_killed_mid_stream_our_client_resumes_and_has_every_stored_event_once(
    fault_redis: FaultRedis, tmp_path: Path
) -> None:
    """mcpkit's Client through haproxy: the worker streaming its call's progress is
    SIGKILLed; the client resumes (GET + Last-Event-ID, on the other worker) and ends with
    every stored event exactly once, in order; the call, whose worker died, ends at its
    timeout."""
    log = tmp_path / "workers.log"
    received: list[float] = []
    killed: asyncio.Future[float] = asyncio.get_running_loop().create_future()
    delays: list[float] = []  # when each event handled after the kill came (s after it)

    def on_progress(progress: float, total: float | None, message: str | None) -> None:
        received.append(progress)
        if killed.done():
            delays.append(round(time.monotonic() - killed.result(), 2))
        if progress == 3 and message is not None:
            # The client handles nothing while this blocks (on purpose): when its worker
            # dies, Redis holds events the client has not handled yet.
            stored_at_least(fault_redis.url, 8)
            os.kill(int(message), signal.SIGKILL)
            killed.set_result(time.monotonic())

    with balanced(fault_redis.url, log) as (balancer, _):
        # Resumes may meet the dead worker first (haproxy has no health checks): 503, again.
        options = HTTPOptions(max_reconnects=10)
        async with Client(balancer, mode="handshake", http=options) as client:
            with pytest.raises(MCPError) as ended:
                await client.call_tool(
                    "pid_steps", {"count": 60, "pause": 0.1}, on_progress=on_progress, timeout=6
                )
            control = fault_redis.client()  # (before the client ends its session)
            stored = await stored_progress(control)
            await control.aclose()
    print(
        f"SIGKILL mid-stream: {len(stored)} stored, {len(received)} received: {received}; "
        f"those handled after the kill came {delays} s after it; the call: {ended.value!r}"
    )
    assert killed.done()
    assert received == list(range(1, len(received) + 1))  # each once, in order, no gap
    assert set(stored) <= set(received) and len(stored) >= 8


async def test_a_worker_killed_after_its_client_lost_the_stream_every_stored_event_resumes_once(
    fault_redis: FaultRedis, tmp_path: Path
) -> None:
    """The client's stream drops after the first progress event; the worker goes on, stores
    more, and is SIGKILLed. A GET with Last-Event-ID through haproxy, served by the other
    worker, gets every event stored after that one: once, in order."""
    log = tmp_path / "workers.log"
    control = fault_redis.client()
    with balanced(fault_redis.url, log) as (balancer, processes):
        async with httpx.AsyncClient(timeout=30) as http:
            headers = await open_session(http, balancer)
            call = tool_call(2, "pid_steps", count=60, pause=0.05)
            call["params"]["_meta"] = {"progressToken": "p"}
            first: dict[str, Any] | None = None
            async with http.stream("POST", balancer, json=call, headers=headers) as response:
                buffer = ""
                async for chunk in response.aiter_text():
                    buffer += chunk
                    found = [(i, d) for i, d in events(buffer) if d is not None]
                    if found:
                        (last_id, first), *_ = found
                        break  # the first progress event: the stream drops here
            assert first is not None and first["params"]["progress"] == 1
            while len(await stored_progress(control)) < 8:  # the worker goes on, stores more
                await asyncio.sleep(0.02)
            producer = processes[int(first["params"]["message"])]
            producer.send_signal(signal.SIGKILL)
            await asyncio.to_thread(producer.wait, 10)
            stored = await stored_progress(control)

            resume = dict(headers, **{"last-event-id": last_id})
            replayed: list[float] = []
            for _ in range(6):  # haproxy may first try the dead worker (503)
                async with http.stream("GET", balancer, headers=resume) as again:
                    if again.status_code != 200:
                        continue
                    buffer = ""
                    async for chunk in again.aiter_text():  # a follow stays open: stop
                        buffer += chunk  # once every stored event came
                        replayed = [
                            d["params"]["progress"] for _, d in events(buffer) if d is not None
                        ]
                        if len(replayed) >= len(stored) - 1:
                            break
                    break
    await control.aclose()
    print(f"SIGKILL after the stream dropped: {len(stored)} stored, replayed {replayed}")
    assert replayed == stored[1:] == list(range(2, len(stored) + 1))  # once, in order


# -- Redis restarted under load --------------------------------------------------------------


@pytest.mark.parametrize("fault_redis", ["everysec", "always"], indirect=True)
async def test_with_appendonly_sessions_survive_a_redis_crash_under_load(
    fault_redis: FaultRedis, tmp_path: Path
) -> None:
    """Three clients call tools through haproxy while Redis is killed (SIGKILL) and started
    again: calls meanwhile fail with 503 (fast: Redis refuses), none hangs; once Redis has
    reloaded its AOF every session is still there (no 404: the clients go on)."""
    log = tmp_path / "workers.log"
    outcomes: dict[str, int] = {}
    restarted = asyncio.Event()
    after = [0, 0, 0]

    async def load(client: Client, index: int) -> None:
        while after[index] < 5:  # five good calls after the restart
            started = time.monotonic()
            try:
                await client.call_tool("which_worker", {})
                outcome = "ok"
                if restarted.is_set():
                    after[index] += 1
            except ConnectionClosed:
                raise  # the session was lost: the test fails
            except MCPError as exc:
                assert "Service Unavailable: the session store is unavailable" in str(exc)
                outcome = "503"
            assert time.monotonic() - started < BOUND
            outcomes[outcome] = outcomes.get(outcome, 0) + 1
            await asyncio.sleep(0.02)  # pace: a few calls a second each

    with balanced(fault_redis.url, log) as (balancer, _):
        async with contextlib.AsyncExitStack() as stack:
            clients = [
                await stack.enter_async_context(Client(balancer, mode="handshake"))
                for _ in range(3)
            ]
            running = [asyncio.ensure_future(load(c, i)) for i, c in enumerate(clients)]
            await asyncio.sleep(0.5)  # load before the crash
            fault_redis.stop(signal.SIGKILL)
            # Load while Redis is down, longer than a copy is trusted without asking Redis
            # (at most 1 s): a shorter outage may be served entirely from checked copies.
            await asyncio.sleep(1.5)
            fault_redis.start()
            restarted.set()
            await asyncio.wait_for(asyncio.gather(*running), 60)
    print(f"Redis SIGKILLed and restarted (appendfsync {fault_redis.argv[-1]}): {outcomes}")
    assert outcomes.get("503", 0) > 0 and outcomes["ok"] > 0
    assert PASSWORD not in log.read_text()


async def test_without_persistence_a_redis_restart_ends_every_session(
    fault_redis: FaultRedis, tmp_path: Path
) -> None:
    """What is lost without appendonly: the sessions. A client then hears 404 and closes
    (ConnectionClosed), or starts a new session with `renew_session`."""
    log = tmp_path / "workers.log"
    with workers(fault_redis.url, 1, log) as [(url, _)]:
        async with Client(url, mode="handshake") as client:
            await client.call_tool("which_worker", {})
            fault_redis.stop()
            fault_redis.start()
            await asyncio.sleep(TRUSTED + 0.3)  # the worker's next check finds the record gone
            with pytest.raises(ConnectionClosed) as lost:
                await client.call_tool("which_worker", {})
    print(f"no persistence, Redis restarted: {lost.value}")
    assert "404" in str(lost.value)
