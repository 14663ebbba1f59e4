"""A downstream session that ends by its idle timeout ends its upstream HTTP session (issue 25:
upstream sessions are "closed when the downstream session ends"): the upstream gets DELETE
and frees the session's state, instead of keeping it until its own idle timeout.

(a) One process: the idle sweep ends the session, which closes its upstream client.
(b) Several workers sharing a `RedisState`: every copy only detaches; the workers' expiry
    sweep (gateway/resume.py) ends the upstream session once the downstream record expired,
    on one worker only, and never while the session is still used somewhere.

Real parts: an mcpkit upstream over Streamable HTTP on 127.0.0.1 (uvicorn on a thread of its
own, so the test may block while it answers the proxies), recording the sessions it opened
and the ones DELETE ended; the proxy in process (a); `redis-server` and two proxy worker
processes (tests/gateway/expiry_worker.py) for (b).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest
import redis.asyncio
import uvicorn

from mcpkit import Client, Server
from mcpkit.gateway import proxy
from mcpkit.server import Context
from tests.http.servers import serving, unused_port, wait_until_listening
from tests.peers import redis_server
from tests.scaleout.conftest import processes

pytestmark = pytest.mark.timeout(240)  # worker processes start slowly on a loaded machine

IDLE = 3.0  # the proxies' idle timeout (s): short, but longer than a step of a test
BOUND = 60.0  # the DELETE comes within this (s): the idle timeout, then a sweep or two
KEY = "upstream-expiry-tests-request-state-key"
PREFIX = "expiry:"  # expiry_worker.py's RedisState prefix


class RecordingUpstream:
    """An upstream remembering a value per session, recording the ids of the sessions it
    opened (`created`) and of those a DELETE ended (`deleted`, once answered)."""

    def __init__(self) -> None:
        self.created: list[str] = []
        self.deleted: list[str] = []
        self._changed = threading.Condition()
        self.server = Server("expiry-upstream", version="1.0.0")
        memory: dict[Any, str] = {}

        @self.server.tool()
        def remember(value: str, ctx: Context) -> str:
            """Keep `value` in this upstream session."""
            memory[ctx.peer] = value
            return "kept"

        @self.server.tool()
        def recall(ctx: Context) -> str:
            """What this upstream session keeps ("" in a new one)."""
            return memory.get(ctx.peer, "")

    def app(self) -> Any:
        inner = self.server.http_app()

        async def recording(scope: Any, receive: Any, send: Any) -> None:
            headers = dict(scope.get("headers", ()))
            session = headers.get(b"mcp-session-id")
            if scope["type"] != "http" or scope["method"] not in ("POST", "DELETE"):
                await inner(scope, receive, send)
            elif scope["method"] == "DELETE":
                await inner(scope, receive, send)
                if session is not None:
                    self._note(self.deleted, session.decode())
            elif session is None:  # an initialize: its answer names the new session

                async def noting(message: Any) -> None:
                    if message["type"] == "http.response.start":
                        for name, value in message.get("headers", ()):
                            if name.lower() == b"mcp-session-id":
                                self._note(self.created, value.decode())
                    await send(message)

                await inner(scope, receive, noting)
            else:
                await inner(scope, receive, send)

        return recording

    def _note(self, into: list[str], session: str) -> None:
        with self._changed:
            into.append(session)
            self._changed.notify_all()

    def sessions(self) -> set[str]:
        with self._changed:
            return set(self.created)

    def wait_deleted(self, session: str, timeout: float) -> int:
        """Block until `session` was DELETEd (at most `timeout` s); how many times it was."""
        with self._changed:
            self._changed.wait_for(lambda: session in self.deleted, timeout)
            return self.deleted.count(session)


@contextlib.contextmanager
def on_a_thread(app: Any) -> Iterator[str]:
    """Serve `app` with uvicorn on 127.0.0.1 from a thread of its own; yields its /mcp URL."""
    port = unused_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", ws="none")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        wait_until_listening(url, 20)
        yield url
    finally:
        server.should_exit = True
        thread.join(10)


@pytest.fixture(scope="module")
def upstream() -> Iterator[tuple[RecordingUpstream, str]]:
    recording = RecordingUpstream()
    with on_a_thread(recording.app()) as url:
        yield recording, url


@pytest.fixture(scope="module", autouse=True)
def request_state_keys() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:  # every worker process inherits it
        patch.setenv("MCPKIT_REQUEST_STATE_KEYS", KEY)
        yield


@contextlib.contextmanager
def two_workers(target: str) -> Iterator[tuple[str, str, str]]:
    """Two proxy worker processes of `target` (an upstream URL or an mcpServers file) sharing
    a redis-server: (worker 1, worker 2, Redis URL)."""
    with redis_server() as redis_url:
        ports = [unused_port(), unused_port()]
        worker = [sys.executable, "-m", "tests.gateway.expiry_worker"]
        argvs = [[*worker, str(port), redis_url, target, str(IDLE)] for port in ports]
        with processes(argvs):
            one, two = (f"http://127.0.0.1:{port}/mcp" for port in ports)
            for url in (one, two):
                wait_until_listening(url, 60)
            yield one, two, redis_url


@pytest.fixture(scope="module")
def workers(upstream: tuple[RecordingUpstream, str]) -> Iterator[tuple[str, str, str]]:
    with two_workers(upstream[1]) as urls:
        yield urls


@pytest.fixture(scope="module")
def gateway_workers(
    upstream: tuple[RecordingUpstream, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, str, str]]:
    """Two gateway workers of two servers, both the recording upstream."""
    path = tmp_path_factory.mktemp("expiry") / "servers.json"
    servers = {"notes": {"url": upstream[1]}, "memo": {"url": upstream[1]}}
    path.write_text(json.dumps({"mcpServers": servers}))
    with two_workers(str(path)) as urls:
        yield urls


def text(result: Any) -> str:
    return str(result.content[0].text)


async def deletes(recording: RecordingUpstream, session: str) -> int:
    """How many DELETEs `session` got, once it got one (at most `BOUND` s from now)."""
    return await asyncio.to_thread(recording.wait_deleted, session, BOUND)


async def test_one_process_an_idle_expired_session_ends_its_upstream_session(
    upstream: tuple[RecordingUpstream, str],
) -> None:
    recording, target = upstream
    app = proxy(target, mode="handshake", timeout=20).http_app(idle_timeout=IDLE)
    async with serving(app) as base:
        before = recording.sessions()
        async with Client(f"{base}/mcp", protocol_version="2025-11-25", timeout=20) as client:
            assert text(await client.call_tool("remember", {"value": "tea"})) == "kept"
            await client.detach()  # no DELETE: the session is left to its idle timeout
        (session,) = recording.sessions() - before  # the downstream session's upstream one
        assert await deletes(recording, session) == 1


async def test_workers_an_expired_session_ends_its_upstream_session_once(
    upstream: tuple[RecordingUpstream, str], workers: tuple[str, str, str]
) -> None:
    """Used on both workers (each holds an upstream client of it), then left idle: both
    copies only detach, and the expiry sweep of one worker ends the upstream session."""
    recording, _ = upstream
    one, two, redis_url = workers
    before = recording.sessions()
    async with Client(one, protocol_version="2025-11-25", timeout=20) as client:
        assert text(await client.call_tool("remember", {"value": "tea"})) == "kept"
        opened = client.opened_session()
        assert opened is not None
        resumed = await Client(two, timeout=20).resume(opened)
        assert text(await resumed.call_tool("recall", {})) == "tea"  # the same upstream one
        await resumed.detach()
        await client.detach()  # no DELETE: the session is left to its idle timeout
    (session,) = recording.sessions() - before
    assert await deletes(recording, session) == 1
    # Exactly one: the other worker's sweep, and the copies dropped when idle, add none. A
    # second DELETE would come within a sweep period (IDLE / 4) or two: nothing to await.
    await asyncio.sleep(IDLE)
    assert recording.deleted.count(session) == 1
    state = redis.asyncio.Redis.from_url(redis_url)
    try:  # the record and its index entry are gone with it
        assert await state.exists(f"{PREFIX}upstreams:{opened.session_id}") == 0
        assert await state.zscore(f"{PREFIX}upstream-expiry:", opened.session_id) is None
    finally:
        await state.aclose()


async def test_workers_a_session_still_used_keeps_its_upstream_session(
    upstream: tuple[RecordingUpstream, str], workers: tuple[str, str, str]
) -> None:
    """The session forwards on worker 1 only, then is used on worker 2 with pings (nothing
    forwarded: worker 2 holds no upstream client and refreshes nothing). Worker 1's copy
    goes idle and its refresh stops, so the index entry falls due while the session lives:
    the sweep must find the session's record there and leave the upstream session be."""
    recording, _ = upstream
    one, two, _ = workers
    before = recording.sessions()
    async with Client(one, protocol_version="2025-11-25", timeout=20) as client:
        assert text(await client.call_tool("remember", {"value": "juice"})) == "kept"
        opened = client.opened_session()
        assert opened is not None
        await client.detach()
    (session,) = recording.sessions() - before
    resumed = await Client(two, timeout=20).resume(opened)
    try:
        # Long enough for worker 1's copy to go (IDLE), its last refresh's score to fall
        # due (IDLE more) and a few sweeps to look at it.
        loop = asyncio.get_running_loop()
        end = loop.time() + 4 * IDLE
        while loop.time() < end:
            await resumed.ping()  # the session is in use
            await asyncio.sleep(IDLE / 10)
        assert session not in recording.deleted
        assert text(await resumed.call_tool("recall", {})) == "juice"  # the same upstream one
    finally:
        await resumed.close()  # DELETE: the session ends, and its upstream session with it
    assert await deletes(recording, session) == 1


async def test_gateway_workers_an_expired_session_ends_each_upstream_session(
    upstream: tuple[RecordingUpstream, str], gateway_workers: tuple[str, str, str]
) -> None:
    """A gateway's session with an upstream session on each of two servers: each server's
    sweep ends its own (each DELETEd once)."""
    recording, _ = upstream
    one, two, _ = gateway_workers
    before = recording.sessions()
    async with Client(one, protocol_version="2025-11-25", timeout=20) as client:
        await client.call_tool("notes__remember", {"value": "tea"})
        opened = client.opened_session()
        assert opened is not None
        resumed = await Client(two, timeout=20).resume(opened)
        await resumed.call_tool("memo__remember", {"value": "cake"})
        assert text(await resumed.call_tool("notes__recall", {})) == "tea"
        await resumed.detach()
        await client.detach()
    opened_here = recording.sessions() - before
    assert len(opened_here) == 2  # one upstream session per server
    for session in opened_here:
        assert await deletes(recording, session) == 1
