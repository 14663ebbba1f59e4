"""`mcpkit proxy --redis` on several workers behind round-robin haproxy, no stickiness (issue
25: "with the scale-out state of the previous issue, a gateway with several workers keeps
working without stickiness").

Real parts: `redis-server`, `haproxy` (the scale-out tests' fixtures), `mcpkit proxy`
worker processes, and tests/gateway/workers_upstream.py as the upstream: over HTTP (one
process, counting its handshakes and DELETEs) and over stdio (a process per worker and
downstream session). Round robin over three workers: any three requests in a row reach all
three.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client

from mcpkit import Client
from mcpkit.client.resume import OpenedSession
from mcpkit.errors import LocalProtocolViolation
from mcpkit.gateway.resume import Sealer
from mcpkit.protocol import Connection, ConnectionConfig, State
from mcpkit.server.request_state import RequestStateKeys
from tests.http.servers import unused_port, wait_until_listening
from tests.peers import redis_server
from tests.scaleout.conftest import haproxy, processes

pytestmark = pytest.mark.timeout(240)  # worker processes start slowly on a loaded machine

UPSTREAM = Path(__file__).with_name("workers_upstream.py")
KEY = "gateway-workers-tests-request-state-key"
JSONObject = dict[str, Any]


@pytest.fixture(scope="module", autouse=True)
def request_state_keys() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:  # every worker process inherits it
        patch.setenv("MCPKIT_REQUEST_STATE_KEYS", KEY)
        yield


def proxy_worker(target: str, port: int, redis: str, *more: str) -> list[str]:
    return [sys.executable, "-m", "mcpkit", "proxy", target, "--transport", "http",
            "--port", str(port), "--redis", redis, *more]  # fmt: skip


@contextlib.contextmanager
def workers(target: str, count: int, *more: str) -> Iterator[str]:
    """`count` proxy workers of `target` sharing a Redis of their own, behind haproxy."""
    with redis_server() as redis:
        ports = [unused_port() for _ in range(count)]
        with processes([proxy_worker(target, port, redis, *more) for port in ports]):
            for port in ports:
                wait_until_listening(f"http://127.0.0.1:{port}/mcp", 60)
            with haproxy(ports) as url:
                yield url


@pytest.fixture(scope="module")
def upstream_url() -> Iterator[str]:
    port = unused_port()
    with processes([[sys.executable, str(UPSTREAM), str(port)]]):
        url = f"http://127.0.0.1:{port}/mcp"
        wait_until_listening(url, 20)
        yield url


@pytest.fixture(scope="module")
def http_gateway(upstream_url: str) -> Iterator[str]:
    """Three workers in front of the HTTP upstream, speaking the handshake era to it."""
    with workers(upstream_url, 3, "--mode", "handshake") as url:
        yield url


@pytest.fixture(scope="module")
def stdio_gateway() -> Iterator[str]:
    """Three workers in front of the stdio upstream (each worker its own processes)."""
    with workers(f"{sys.executable} {UPSTREAM}", 3) as url:
        yield url


def text(result: Any) -> str:
    return str(result.content[0].text)


def sample(params: Any) -> JSONObject:
    question = params.messages[0].content.text
    return {
        "role": "assistant",
        "content": {"type": "text", "text": f"re: {question}"},
        "model": "m",
    }


async def upstream_stats(upstream_url: str) -> JSONObject:
    async with Client(upstream_url, mode="handshake", timeout=20) as direct:
        result = await direct.call_tool("stats", {})
    stats: JSONObject = result.structured_content or {}
    return stats


# -- an HTTP upstream: one upstream session per downstream session ----------------------------


@pytest.mark.parametrize("version", ["2025-11-25", "2025-03-26"])
async def test_a_downstream_session_has_one_upstream_session_on_every_worker(
    http_gateway: str, upstream_url: str, version: str
) -> None:
    before = await upstream_stats(upstream_url)
    async with Client(http_gateway, protocol_version=version, timeout=20) as client:
        assert text(await client.call_tool("remember", {"value": "tea"})) == "kept"
        for _ in range(6):  # twice round the three workers
            assert text(await client.call_tool("recall", {})) == "tea"
        during = await upstream_stats(upstream_url)
    after = await upstream_stats(upstream_url)
    # One handshake for the downstream session (the other: the stats client's own), and
    # the DELETE of the downstream session ended that one upstream session (the others:
    # the two earlier stats clients').
    assert during["initialize"] - before["initialize"] == 2
    assert during["live"] - before["live"] == 1
    assert after["delete"] - before["delete"] == 3
    assert after["live"] == before["live"]


async def test_a_delete_on_a_worker_that_never_forwarded_ends_the_upstream_session(
    upstream_url: str,
) -> None:
    """The session is used on worker 1 only; its DELETE goes to worker 2, which holds no
    upstream client for it: it ends the recorded upstream session all the same, and worker
    1 lets its client go without a second DELETE."""
    ports = [unused_port(), unused_port()]
    with redis_server() as redis:
        argvs = [proxy_worker(upstream_url, port, redis, "--mode", "handshake") for port in ports]
        with processes(argvs):
            one, two = (f"http://127.0.0.1:{port}/mcp" for port in ports)
            for url in (one, two):
                wait_until_listening(url, 60)
            before = await upstream_stats(upstream_url)
            async with Client(one, protocol_version="2025-11-25", timeout=20) as client:
                await client.call_tool("remember", {"value": "juice"})
                opened = client.opened_session()
                assert opened is not None
                headers = {
                    "mcp-session-id": opened.session_id,
                    "mcp-protocol-version": "2025-11-25",
                }
                async with httpx.AsyncClient(timeout=20) as http:
                    assert (await http.delete(two, headers=headers)).status_code == 200
                after = await upstream_stats(upstream_url)
    assert after["delete"] - before["delete"] == 2  # the session's, and the first stats'
    assert after["live"] == before["live"]


async def test_a_worker_that_stops_leaves_the_upstream_session_to_the_others(
    upstream_url: str,
) -> None:
    """A deploy: worker 1 stops (SIGTERM) while the session goes on on worker 2, with the
    same upstream session (no DELETE from the stopping worker, no new handshake)."""
    ports = [unused_port(), unused_port()]
    one, two = (f"http://127.0.0.1:{port}/mcp" for port in ports)
    with redis_server() as redis:
        first = subprocess.Popen(proxy_worker(upstream_url, ports[0], redis, "--mode", "handshake"))
        with processes([proxy_worker(upstream_url, ports[1], redis, "--mode", "handshake")]):
            try:
                for url in (one, two):
                    wait_until_listening(url, 60)
                before = await upstream_stats(upstream_url)
                async with Client(one, protocol_version="2025-11-25", timeout=20) as client:
                    await client.call_tool("remember", {"value": "water"})
                    opened = client.opened_session()
                    await client.detach()  # its GET stream would hold worker 1's shutdown
                assert opened is not None
                first.terminate()
                assert first.wait(20) in (0, -15)  # uvicorn re-raises SIGTERM once done
                async with Client(two, mode="per-request", timeout=20) as other:
                    stats = await other.call_tool("stats", {})  # through the shared client
                # The same downstream session, now on worker 2: its upstream session.
                resumed = await Client(two, timeout=20).resume(opened)
                try:
                    assert text(await resumed.call_tool("recall", {})) == "water"
                finally:
                    await resumed.close()  # DELETE: ends it, upstream too
                after = await upstream_stats(upstream_url)
            finally:
                first.kill()
                first.wait(10)
    during = stats.structured_content or {}
    # While worker 1 stopped: one handshake (the session's); DELETEs only from the first
    # stats client and worker 1's own shared upstream client, not the session's, which
    # lives on. Live sessions, relative to before (other tests' may be open): the stats
    # client and worker 1's shared client gone, the session there.
    assert during["initialize"] - before["initialize"] == 1
    assert during["delete"] - before["delete"] == 2
    assert during["live"] == before["live"] - 1
    # The session's DELETE on worker 2 ended its upstream session (the new stats client is
    # live in its place).
    assert (after["delete"] - during["delete"], after["live"]) == (1, during["live"])


async def test_two_downstream_sessions_keep_apart_through_every_worker(
    http_gateway: str, upstream_url: str
) -> None:
    async with (
        Client(http_gateway, protocol_version="2025-11-25", timeout=20) as first,
        Client(http_gateway, protocol_version="2025-06-18", timeout=20) as second,
    ):
        await first.call_tool("remember", {"value": "first"})
        await second.call_tool("remember", {"value": "second"})
        for _ in range(3):
            assert text(await first.call_tool("recall", {})) == "first"
            assert text(await second.call_tool("recall", {})) == "second"


async def test_the_upstreams_sampling_reaches_the_client_through_any_worker(
    http_gateway: str,
) -> None:
    async with Client(http_gateway, protocol_version="2025-11-25", sampling=sample) as client:
        for n in range(4):  # the call, and the client's answer, on any of the workers
            result = await client.call_tool("ask", {"question": f"q{n}"})
            assert text(result) == f"re: q{n}"


async def test_an_upstream_sessions_list_changed_reaches_the_client_on_any_worker(
    http_gateway: str,
) -> None:
    """Each upstream session's own messages come on its GET stream to one worker; the
    downstream client's GET stream may be open on another. Three sessions: with the message
    dropped between workers, all three would arrive only by chance (1 in 27)."""
    heard = [asyncio.Event() for _ in range(3)]

    def hearing(event: asyncio.Event) -> Any:
        return lambda kind: event.set() if kind == "tools" else None

    async with contextlib.AsyncExitStack() as stack:
        clients = [
            await stack.enter_async_context(
                Client(http_gateway, protocol_version="2025-11-25", on_list_changed=hearing(e))
            )
            for e in heard
        ]
        for client in clients:  # each opens its upstream session (and its GET streams)
            for _ in range(3):
                await client.call_tool("recall", {})
        # A client's GET stream opens in the background: a change made before it is open
        # anywhere reaches nobody. Changing again is not a second chance for a message
        # dropped between workers: the same worker drops it every time.
        for _ in range(5):
            await clients[0].call_tool("grow", {"name": f"grown_{uuid.uuid4().hex[:8]}"})
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(3):
                    await asyncio.gather(*(event.wait() for event in heard))
            if all(event.is_set() for event in heard):
                break
        assert all(event.is_set() for event in heard)


async def official_sample(
    context: Any, params: types.CreateMessageRequestParams
) -> types.CreateMessageResult:
    asked = params.messages[0].content.text  # type: ignore[union-attr]
    answer = types.TextContent(type="text", text=f"re: {asked}")
    return types.CreateMessageResult(role="assistant", content=answer, model="m")


async def test_the_official_client_through_the_workers(
    http_gateway: str, upstream_url: str
) -> None:
    before = await upstream_stats(upstream_url)
    async with (
        streamable_http_client(http_gateway) as (read, write),
        ClientSession(read, write, sampling_callback=official_sample) as session,
    ):
        await session.initialize()
        await session.call_tool("remember", {"value": "official"})
        for n in range(3):
            recalled = await session.call_tool("recall", {})
            assert recalled.content[0].text == "official"  # type: ignore[union-attr]
            asked = await session.call_tool("ask", {"question": f"o{n}"})
            assert asked.content[0].text == f"re: o{n}"  # type: ignore[union-attr]
        during = await upstream_stats(upstream_url)
    assert during["initialize"] - before["initialize"] == 2  # the session's, the stats'


async def test_a_per_request_client_through_the_workers(http_gateway: str) -> None:
    async with Client(http_gateway, mode="per-request", timeout=20) as client:
        assert client.era == "per-request"
        for _ in range(3):
            assert text(await client.call_tool("recall", {})) == ""


# -- the gateway form: an mcpServers configuration on several workers -----------------------


@pytest.fixture(scope="module")
def configuration(upstream_url: str, tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("gateway") / "servers.json"
    servers = {
        "notes": {"url": upstream_url},
        "local": {"command": sys.executable, "args": [str(UPSTREAM)]},
    }
    path.write_text(json.dumps({"mcpServers": servers}))
    return str(path)


async def test_a_gateway_on_three_workers_keeps_one_upstream_session_per_session(
    configuration: str, upstream_url: str
) -> None:
    before = await upstream_stats(upstream_url)
    with workers(configuration, 3, "--mode", "handshake") as url:
        async with Client(url, protocol_version="2025-11-25", sampling=sample) as client:
            await client.call_tool("notes__remember", {"value": "coffee"})
            for _ in range(3):
                assert text(await client.call_tool("notes__recall", {})) == "coffee"
            assert text(await client.call_tool("notes__ask", {"question": "g"})) == "re: g"
            assert text(await client.call_tool("local__ask", {"question": "l"})) == "re: l"
            during = await upstream_stats(upstream_url)
        after = await upstream_stats(upstream_url)
    # 3 workers' shared clients, the session's one upstream session, the stats client's.
    assert during["initialize"] - before["initialize"] == 3 + 1 + 1
    assert after["delete"] - during["delete"] == 2  # the session's (the other: the stats')


async def test_mcpkit_proxy_workers_on_one_port(upstream_url: str) -> None:
    """`--workers 2`: uvicorn's worker processes, each made by `mcpkit.cli.proxy:worker_app`."""
    port = unused_port()
    with redis_server() as redis:
        argv = proxy_worker(upstream_url, port, redis, "--workers", "2", "--mode", "handshake")
        with processes([argv]):
            url = f"http://127.0.0.1:{port}/mcp"
            wait_until_listening(url, 60)
            for _ in range(2):  # a new connection each: any of the two processes
                async with Client(url, protocol_version="2025-11-25", timeout=20) as client:
                    await client.call_tool("remember", {"value": "milk"})
                    assert text(await client.call_tool("recall", {})) == "milk"


# -- a stdio upstream: each worker its own process per downstream session ---------------------


async def test_a_stdio_upstream_is_a_process_per_worker_reused_not_a_handshake_per_call(
    stdio_gateway: str,
) -> None:
    async with Client(stdio_gateway, protocol_version="2025-11-25", sampling=sample) as client:
        pids = set()
        for _ in range(9):
            result = await client.call_tool("stats", {})
            pids.add((result.structured_content or {})["pid"])
        assert len(pids) == 3  # one process on each worker, reused for three calls each
        for n in range(3):
            assert text(await client.call_tool("ask", {"question": f"s{n}"})) == f"re: s{n}"


async def test_a_per_request_client_answers_sampling_rounds_on_any_worker(
    stdio_gateway: str,
) -> None:
    async with Client(stdio_gateway, mode="per-request", sampling=sample, timeout=20) as client:
        for n in range(3):  # each retry may land on another worker (another process)
            assert text(await client.call_tool("ask", {"question": f"m{n}"})) == f"re: m{n}"


# -- the record and the command line --------------------------------------------------------


def test_a_sealed_upstream_session_opens_only_for_its_own_downstream_session() -> None:
    sealer = Sealer(RequestStateKeys([KEY]))
    opened = OpenedSession("upstream-id", {"protocolVersion": "2025-11-25"})
    sealed = sealer.seal(opened, b"session-a\0")
    assert b"upstream-id" not in sealed
    assert sealer.open(sealed, b"session-a\0") == opened
    assert sealer.open(sealed, b"session-b\0") is None  # moved to another session
    assert (
        Sealer(RequestStateKeys(["another-key-of-16-bytes"])).open(sealed, b"session-a\0") is None
    )
    rotated = Sealer(RequestStateKeys(["a-newer-key-of-16-bytes", KEY]))
    assert rotated.open(sealed, b"session-a\0") == opened  # the old key still opens


@pytest.mark.parametrize(
    ("more", "message"),
    [
        (["--workers", "2"], "--workers needs --redis"),
        (["--redis", "redis://127.0.0.1:1/0", "--transport", "stdio"], "--transport http"),
    ],
)
def test_the_command_line_refuses_workers_without_redis(more: list[str], message: str) -> None:
    argv = [sys.executable, "-m", "mcpkit", "proxy", "http://127.0.0.1:1/mcp", *more]
    if "--transport" not in more:
        argv += ["--transport", "http"]
    done = subprocess.run(argv, check=False, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and message in done.stderr


def test_several_workers_need_shared_sealing_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MCPKIT_REQUEST_STATE_KEYS")
    argv = [sys.executable, "-m", "mcpkit", "proxy", "http://127.0.0.1:1/mcp", "--transport",
            "http", "--redis", "redis://127.0.0.1:1/0", "--workers", "2"]  # fmt: skip
    done = subprocess.run(argv, check=False, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "MCPKIT_REQUEST_STATE_KEYS" in done.stderr


# -- Client.resume: going on with another client's session ---------------------------------


async def test_a_client_resumes_another_clients_session_and_detaches(upstream_url: str) -> None:
    before = await upstream_stats(upstream_url)
    async with Client(upstream_url, mode="handshake", timeout=20) as first:
        await first.call_tool("remember", {"value": "cocoa"})
        opened = first.opened_session()
        assert opened is not None and opened.initialize_result["serverInfo"]["name"]
        second = await Client(upstream_url, timeout=20).resume(opened)
        try:
            assert (second.era, second.server_info) == ("handshake", first.server_info)
            assert text(await second.call_tool("recall", {})) == "cocoa"
            # Both at once in one session: their request ids never collide, so every
            # answer reaches the request it answers.
            calls = [c.call_tool("recall_later", {}) for c in (first, second) for _ in range(5)]
            assert {text(r) for r in await asyncio.gather(*calls)} == {"cocoa"}
        finally:
            await second.detach()  # no DELETE: the session goes on
        assert text(await first.call_tool("recall", {})) == "cocoa"
        during = await upstream_stats(upstream_url)
    after = await upstream_stats(upstream_url)
    assert during["initialize"] - before["initialize"] == 2  # first's, the stats client's
    assert during["delete"] - before["delete"] == 1  # the first stats client's
    assert after["live"] == before["live"]  # first's close ended the session


async def test_only_a_handshake_http_session_can_be_resumed(upstream_url: str) -> None:
    async with Client(upstream_url, mode="per-request", timeout=20) as modern:
        assert modern.opened_session() is None
    async with Client([sys.executable, str(UPSTREAM)], timeout=20) as local:
        assert local.opened_session() is None
        with pytest.raises(ValueError, match="Streamable HTTP"):
            await Client([sys.executable, str(UPSTREAM)]).resume(
                OpenedSession("x", {"protocolVersion": "2025-11-25"})
            )


# -- going on with another process's upstream session (sans-IO) ----------------------------


def test_a_client_connection_resumes_a_session_without_a_handshake() -> None:
    connection = Connection(ConnectionConfig(role="client", info={"name": "c", "version": "1"}))
    result = {
        "protocolVersion": "2025-06-18",
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "s", "version": "2"},
        "instructions": "be kind",
    }
    connection.resume(result, first_request_id=2**40)
    assert connection.state is State.READY and connection.protocol_version == "2025-06-18"
    assert connection.data_to_send() == []  # no initialize, no initialized
    assert (connection.peer_info, connection.instructions) == (result["serverInfo"], "be kind")
    assert connection.send_request("tools/list", now=0) == 2**40
    with pytest.raises(LocalProtocolViolation):  # once only, on a new connection
        connection.resume(result)


@pytest.mark.parametrize(
    ("role", "result"),
    [
        ("server", {"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {}}),
        ("client", {"protocolVersion": "2025-06-18", "capabilities": {}}),
        ("client", {"protocolVersion": "1999-01-01", "capabilities": {}, "serverInfo": {}}),
    ],
)
def test_resume_refuses_a_server_and_a_result_it_cannot_go_on_with(
    role: Any, result: JSONObject
) -> None:
    connection = Connection(ConnectionConfig(role=role, info={"name": "x", "version": "1"}))
    with pytest.raises(LocalProtocolViolation):
        connection.resume(result)
