"""stdio against real processes: mcpkit's Client and raw newline-delimited JSON on the pipes.

The server is `tests/fixtures/stdio_server.py`, started as a child process for every test.
Where the bytes on the wire matter (garbage input, stdout purity, answers that must never be
sent) the test speaks JSON-RPC over the pipes itself instead of going through the Client.
"""

from __future__ import annotations

import asyncio
import os
import signal
import string
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from mcpkit import Client
from mcpkit.errors import ConnectionClosed, RequestTimeout
from mcpkit.protocol import Outgoing
from mcpkit.transports.stdio import SubprocessTransport

FIXTURES = Path(__file__).parent / "fixtures"
SERVER = [sys.executable, str(FIXTURES / "stdio_server.py")]
STUBBORN = [sys.executable, str(FIXTURES / "stubborn.py")]
SILENT = [sys.executable, str(FIXTURES / "silent.py")]


def call(name: str, **arguments: Any) -> dict[str, Any]:
    """tools/call params."""
    return {"name": name, "arguments": arguments}


def text_of(result: dict[str, Any]) -> str:
    assert result["isError"] is False, result
    [block] = result["content"]
    assert block["type"] == "text"
    return block["text"]


class RawPeer:
    """The fixture server as a child process, spoken to line by line without mcpkit's client."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.stderr: list[str] = []
        self._stderr_task = asyncio.get_running_loop().create_task(self._collect_stderr())

    @classmethod
    async def start(cls) -> RawPeer:
        process = await asyncio.create_subprocess_exec(
            *SERVER,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            limit=64 * 1024 * 1024,
        )
        return cls(process)

    async def _collect_stderr(self) -> None:
        assert self.process.stderr is not None
        while line := await self.process.stderr.readline():
            self.stderr.append(line.decode(errors="replace").rstrip("\n"))

    def send(self, *messages: dict[str, Any] | bytes) -> None:
        """Write all messages in one burst (one write call), one per line."""
        assert self.process.stdin is not None
        lines = [m if isinstance(m, bytes) else orjson.dumps(m) for m in messages]
        self.process.stdin.write(b"".join(line + b"\n" for line in lines))

    async def receive(self, timeout: float = 5.0) -> dict[str, Any]:
        """The next line from the server's stdout, which must be a JSON object."""
        assert self.process.stdout is not None
        line = await asyncio.wait_for(self.process.stdout.readline(), timeout)
        assert line, "the server closed its stdout"
        assert line.endswith(b"\n")
        message = orjson.loads(line)
        assert type(message) is dict, line
        return message

    async def receive_many(self, count: int) -> list[dict[str, Any]]:
        return [await self.receive() for _ in range(count)]

    async def request(self, request_id: int, method: str, params: Any = None) -> dict[str, Any]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        answer = await self.receive()
        assert answer["id"] == request_id, answer
        return answer

    async def initialize(self, version: str = "2025-11-25") -> None:
        params = {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "raw-test", "version": "0"},
        }
        answer = await self.request(0, "initialize", params)
        assert answer["result"]["protocolVersion"] == version
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    async def close(self) -> None:
        process = self.process
        if process.returncode is None:
            assert process.stdin is not None
            process.stdin.close()
            try:
                await asyncio.wait_for(process.wait(), 5)
            except TimeoutError:
                process.kill()
                await process.wait()
        await asyncio.wait_for(self._stderr_task, 5)


@pytest.fixture
async def raw() -> AsyncIterator[RawPeer]:
    peer = await RawPeer.start()
    try:
        await peer.initialize()
        yield peer
    finally:
        await peer.close()


def request(request_id: int, method: str, params: Any = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


# -- a normal session ------------------------------------------------------------------------


async def test_tool_call_and_stray_stdout_goes_to_stderr() -> None:
    stderr_lines: list[str] = []
    wanted = {"shouted-7f3a", "logged-19c2"}
    all_seen = asyncio.Event()

    def on_stderr(line: str) -> None:
        stderr_lines.append(line)
        if wanted <= set(stderr_lines):
            all_seen.set()

    async with Client(SERVER, stderr=on_stderr) as client:
        assert client.server_info["name"] == "stdio-fixture"
        assert text_of(await client.request("tools/call", call("echo", text="hello"))) == "hello"
        shouted = await client.request("tools/call", call("shout", text="shouted-7f3a"))
        assert text_of(shouted) == "SHOUTED-7F3A"
        logged = await client.request("tools/call", call("log_to_stderr", text="logged-19c2"))
        assert text_of(logged) == "logged"
        assert text_of(await client.request("tools/call", call("add", a=2, b=3))) == "5"
        await asyncio.wait_for(all_seen.wait(), 5)
    assert stderr_lines.count("shouted-7f3a") == 1


async def test_stdout_carries_nothing_but_protocol_messages(raw: RawPeer) -> None:
    raw.send(request(1, "tools/call", call("shout", text="not-on-stdout")))
    answer = await raw.receive()  # the print() did not produce a line here first
    assert answer == {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"content": [{"type": "text", "text": "NOT-ON-STDOUT"}], "isError": False},
    }
    assert raw.process.stdin is not None and raw.process.stdout is not None
    raw.process.stdin.close()
    assert await asyncio.wait_for(raw.process.stdout.read(), 5) == b""  # nothing else, ever
    assert await asyncio.wait_for(raw.process.wait(), 5) == 0
    await raw.close()
    assert "not-on-stdout" in raw.stderr


# -- the server dies -------------------------------------------------------------------------


async def test_crash_fails_every_pending_request_at_once() -> None:
    loop = asyncio.get_running_loop()
    async with Client(SERVER) as client:
        sleepers = [
            loop.create_task(client.request("tools/call", call("sleep", seconds=30)))
            for _ in range(5)
        ]
        # Started after the sleepers, so sent after them: once it is answered, the server has
        # read every sleep request and is running them.
        synced = loop.create_task(client.request("tools/call", call("echo", text="sync")))
        assert text_of(await synced) == "sync"
        assert not any(task.done() for task in sleepers)

        started = loop.time()
        with pytest.raises(ConnectionClosed) as crashed:
            await client.request("tools/call", call("crash", code=7))
        outcomes = await asyncio.gather(*sleepers, return_exceptions=True)
        elapsed = loop.time() - started

        assert elapsed < 5, f"took {elapsed:.1f} s; the request timeout is 60 s"
        assert all(type(outcome) is ConnectionClosed for outcome in outcomes), outcomes
        message = str(crashed.value)
        assert "exited with code 7" in message
        assert "crashing with code 7" in message  # the stderr tail explains the crash
        assert all("exited with code 7" in str(outcome) for outcome in outcomes)

        started = loop.time()
        with pytest.raises(ConnectionClosed, match="exited with code 7"):
            await client.request("tools/call", call("echo", text="too late"))
        with pytest.raises(ConnectionClosed):
            await client.ping()
        assert loop.time() - started < 0.5


# -- bad input -------------------------------------------------------------------------------


async def test_garbage_gets_specified_errors_and_spares_its_neighbours(raw: RawPeer) -> None:
    raw.send(
        request(10, "tools/call", call("echo", text="before")),
        b"this is not json {",
        b'{"jsonrpc": "2.0", "hello": "world"}',
        request(11, "no/such/method"),
        b'{"jsonrpc": "2.0", "id": 12}',
        request(13, "tools/call", call("echo", text="after")),
    )
    answers = await raw.receive_many(6)
    by_id = {answer["id"]: answer for answer in answers if answer["id"] is not None}
    anonymous = sorted(answer["error"]["code"] for answer in answers if answer["id"] is None)

    assert anonymous == [-32700, -32600]  # unparseable; a JSON object that is no request
    assert by_id[11]["error"]["code"] == -32601
    assert by_id[12]["error"]["code"] == -32600
    assert text_of(by_id[10]["result"]) == "before"
    assert text_of(by_id[13]["result"]) == "after"
    assert all(answer["jsonrpc"] == "2.0" for answer in answers)

    # Still alive and still correct.
    after = await raw.request(14, "tools/call", call("add", a=20, b=22))
    assert text_of(after["result"]) == "42"
    assert raw.process.returncode is None


async def test_object_without_jsonrpc_member_gets_invalid_request(raw: RawPeer) -> None:
    raw.send(b'{"hello": "world"}', request(1, "ping"))
    first = await raw.receive()
    assert first["id"] is None and first["error"]["code"] == -32600


async def test_garbage_before_initialize_is_answered_too() -> None:
    peer = await RawPeer.start()
    try:
        peer.send(b"][", request(1, "tools/list"), request(2, "ping"))
        parse_error, too_early, pong = await peer.receive_many(3)
        assert parse_error["id"] is None and parse_error["error"]["code"] == -32700
        assert too_early["id"] == 1 and too_early["error"]["code"] == -32602  # no envelope
        assert pong == {"jsonrpc": "2.0", "id": 2, "result": {}}
        await peer.initialize()
        listed = await peer.request(3, "tools/list")
        assert "echo" in {tool["name"] for tool in listed["result"]["tools"]}
    finally:
        await peer.close()


# -- volume ----------------------------------------------------------------------------------


async def test_ten_megabyte_message_round_trips_intact() -> None:
    # Mixed one-, two- and three-byte UTF-8 characters, so chunk boundaries fall mid-character.
    pattern = string.ascii_letters + string.digits + 'é✓ß€\\"\t'
    text = (pattern * (10 * 1024 * 1024 // len(pattern) + 1))[: 10 * 1024 * 1024]
    async with Client(SERVER) as client:
        result = await client.request("tools/call", call("echo", text=text))
        assert text_of(result) == text
        assert text_of(await client.request("tools/call", call("add", a=1, b=1))) == "2"


async def test_a_thousand_concurrent_requests_each_get_their_own_answer() -> None:
    async with Client(SERVER) as client:
        sums = [client.request("tools/call", call("add", a=i, b=10_000)) for i in range(500)]
        echoes = [client.request("tools/call", call("echo", text=f"echo-{i}")) for i in range(500)]
        results = await asyncio.gather(*sums, *echoes)
    assert [text_of(r) for r in results[:500]] == [str(i + 10_000) for i in range(500)]
    assert [text_of(r) for r in results[500:]] == [f"echo-{i}" for i in range(500)]


# -- cancellation ----------------------------------------------------------------------------


async def test_cancelling_a_call_cancels_the_running_handler(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    loop = asyncio.get_running_loop()
    async with Client(SERVER) as client:
        sleeping = loop.create_task(
            client.request("tools/call", call("sleep", seconds=30, marker=str(marker)))
        )
        # Sent after the sleep request on the same pipe: its answer means the handler runs.
        synced = loop.create_task(client.request("tools/call", call("echo", text="sync")))
        assert text_of(await synced) == "sync"
        assert not marker.exists()

        sleeping.cancel()
        with pytest.raises(asyncio.CancelledError):
            await sleeping
        # notifications/cancelled went out before this ping; by the time the server answers
        # it, it has cancelled the handler task and the handler has run its except block.
        await client.ping()
        assert marker.read_text() == "cancelled"
        # The connection is unharmed.
        assert text_of(await client.request("tools/call", call("add", a=1, b=2))) == "3"


def cancelled(request_id: int) -> dict[str, Any]:
    params = {"requestId": request_id, "reason": "test"}
    return {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}


async def assert_nothing_arrives(peer: RawPeer, within: float) -> None:
    assert peer.process.stdout is not None
    with pytest.raises(TimeoutError):
        line = await asyncio.wait_for(peer.process.stdout.readline(), within)
        pytest.fail(f"unexpected output: {line!r}")


async def test_no_answer_for_a_request_cancelled_in_the_same_burst(raw: RawPeer) -> None:
    # The handler would answer after 0.3 s; waiting 1 s shows that it never does.
    raw.send(
        request(1, "tools/call", call("sleep", seconds=0.3)),
        cancelled(1),
        request(2, "ping"),
    )
    assert await raw.receive() == {"jsonrpc": "2.0", "id": 2, "result": {}}
    await assert_nothing_arrives(raw, within=1.0)
    assert (await raw.request(3, "ping"))["result"] == {}


async def test_no_answer_for_a_running_request_once_cancelled(raw: RawPeer, tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    raw.send(request(1, "tools/call", call("sleep", seconds=0.3, marker=str(marker))))
    await raw.request(2, "ping")  # answered after the sleep request was dispatched
    raw.send(cancelled(1))
    await raw.request(3, "ping")
    assert marker.read_text() == "cancelled"
    await assert_nothing_arrives(raw, within=1.0)
    # Cancelling again, or cancelling an id that never existed, is ignored without an answer.
    raw.send(cancelled(1), cancelled(999))
    assert (await raw.request(4, "ping"))["result"] == {}


# -- shutdown --------------------------------------------------------------------------------


async def test_server_exits_with_zero_on_stdin_eof(raw: RawPeer) -> None:
    assert raw.process.stdin is not None
    raw.process.stdin.close()
    assert await asyncio.wait_for(raw.process.wait(), 5) == 0


async def test_server_exits_on_eof_even_with_a_handler_running(raw: RawPeer) -> None:
    raw.send(request(1, "tools/call", call("sleep", seconds=30)))
    await raw.request(2, "ping")
    assert raw.process.stdin is not None
    loop = asyncio.get_running_loop()
    started = loop.time()
    raw.process.stdin.close()
    assert await asyncio.wait_for(raw.process.wait(), 5) == 0
    assert loop.time() - started < 5


async def test_close_of_a_well_behaved_server_needs_no_signal() -> None:
    transport = await SubprocessTransport.spawn(SERVER, shutdown_timeout=5)
    received: asyncio.Queue[bytes] = asyncio.Queue()
    transport.attach(received.put_nowait, lambda: None, lambda: None)
    transport.write([Outgoing(orjson.dumps(request(1, "ping")))])
    assert orjson.loads(await asyncio.wait_for(received.get(), 5))["id"] == 1  # it is up
    loop = asyncio.get_running_loop()
    started = loop.time()
    await transport.close()
    assert transport.process.returncode == 0
    assert loop.time() - started < 2.5  # well inside the grace period: no SIGTERM was needed


@pytest.mark.parametrize(
    ("flags", "returncode", "grace_periods"),
    [
        pytest.param([], -signal.SIGTERM, 1, id="ignores-eof-dies-on-sigterm"),
        pytest.param(["--ignore-sigterm"], -signal.SIGKILL, 2, id="ignores-sigterm-too"),
    ],
)
async def test_close_escalates_to_sigterm_then_sigkill(
    flags: list[str], returncode: int, grace_periods: int
) -> None:
    transport = await SubprocessTransport.spawn([*STUBBORN, *flags], shutdown_timeout=0.5)
    received: asyncio.Queue[bytes] = asyncio.Queue()
    transport.attach(received.put_nowait, lambda: None, lambda: None)
    # Its signal disposition is in place once it says so.
    assert await asyncio.wait_for(received.get(), 5) == b"ready"
    loop = asyncio.get_running_loop()
    started = loop.time()
    await transport.close()
    elapsed = loop.time() - started
    assert transport.process.returncode == returncode
    assert grace_periods * 0.5 <= elapsed < grace_periods * 0.5 + 2
    with pytest.raises(ProcessLookupError):  # gone and reaped, not a zombie
        os.kill(transport.process.pid, 0)


async def test_initialize_times_out_against_a_silent_child(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    loop = asyncio.get_running_loop()
    started = loop.time()
    with pytest.raises(RequestTimeout, match="initialize"):
        async with Client([*SILENT, str(pid_file)], timeout=1):
            pytest.fail("initialize should not have succeeded")
    assert loop.time() - started < 4
    pid = int(pid_file.read_text())
    with pytest.raises(ProcessLookupError):  # the child was stopped and reaped
        os.kill(pid, 0)


# -- files instead of pipes ------------------------------------------------------------------


@pytest.mark.parametrize("stdout_kind", ["pipe", "file"])
async def test_server_reads_and_writes_regular_files(tmp_path: Path, stdout_kind: str) -> None:
    """`server < requests.jsonl > answers.jsonl`: stdin and stdout need not be pipes."""
    initialize = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "file-test", "version": "0"},
    }
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(
        b"".join(
            orjson.dumps(message) + b"\n"
            for message in [
                request(1, "initialize", initialize),
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                request(2, "tools/call", call("add", a=2, b=3)),
                request(3, "tools/call", call("shout", text="to-stderr")),
            ]
        )
    )
    answers = tmp_path / "answers.jsonl"
    with requests.open("rb") as stdin, answers.open("wb") as stdout_file:
        process = await asyncio.create_subprocess_exec(
            *SERVER,
            stdin=stdin,
            stdout=stdout_file if stdout_kind == "file" else asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(process.communicate(), 10)
    assert process.returncode == 0, err.decode(errors="replace")
    lines = (answers.read_bytes() if stdout_kind == "file" else out).splitlines()
    replies = {reply["id"]: reply for reply in map(orjson.loads, lines)}
    assert sorted(replies) == [1, 2, 3]
    assert replies[1]["result"]["protocolVersion"] == "2025-06-18"
    assert text_of(replies[2]["result"]) == "5"
    assert text_of(replies[3]["result"]) == "TO-STDERR"
    assert "to-stderr" in err.decode().splitlines()


def test_server_exits_cleanly_with_stdin_from_dev_null() -> None:
    # epoll refuses /dev/null; the server must still see EOF and exit instead of hanging.
    with open(os.devnull, "rb") as devnull:
        done = subprocess.run(SERVER, stdin=devnull, capture_output=True, timeout=10, check=False)
    assert done.returncode == 0
    assert done.stdout == b""


@pytest.mark.parametrize("stdin_kind", ["pipe", "file"])
def test_a_last_message_without_its_newline_is_answered(stdin_kind: str, tmp_path: Path) -> None:
    # `printf '{...}' | python server.py`: the final line has no newline before EOF. It was
    # dropped silently; it is a message like any other.
    ping = orjson.dumps(request(7, "ping"))
    if stdin_kind == "pipe":
        done = subprocess.run(SERVER, input=ping, capture_output=True, timeout=10, check=False)
    else:
        (tmp_path / "in.json").write_bytes(ping)
        with open(tmp_path / "in.json", "rb") as stdin:
            done = subprocess.run(SERVER, stdin=stdin, capture_output=True, timeout=10, check=False)
    assert done.returncode == 0
    assert [orjson.loads(line) for line in done.stdout.splitlines()] == [
        {"jsonrpc": "2.0", "id": 7, "result": {}}
    ]
