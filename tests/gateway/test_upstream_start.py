"""Upstreams that hang or fail at start, with `mcpkit proxy` (a proxy, a gateway) run as a
real process: it serves within its start bound, answers -32603 for the upstream, stops on
SIGTERM, and leaves no upstream process behind, not even when it is SIGKILLed."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shlex
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import orjson
import pytest

from mcpkit import Client
from mcpkit.errors import INTERNAL_ERROR, ProtocolError
from mcpkit.gateway import gateway
from mcpkit.host import load_config
from tests.http.servers import unused_port, wait_until_listening

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
MINE = [sys.executable, str(HERE / "gateway_upstream.py")]
HUNG = str(HERE / "hung_upstream.py")
BOUND = 2.0  # --start-timeout of these tests


def alive(pid: int) -> bool:
    """Whether process `pid` runs (a zombie, reparented where nothing reaps it, does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rpartition(")")[2].split()[0] not in ("Z", "X")


def pids(path: Path) -> list[int]:
    return [int(line) for line in path.read_text().split()] if path.exists() else []


async def all_gone(path: Path, seconds: float = 10) -> list[int]:
    """The hung upstreams still running once `seconds` passed (none, as soon as none run)."""
    deadline = time.monotonic() + seconds
    while (left := [pid for pid in pids(path) if alive(pid)]) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    return left


async def started(path: Path, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not pids(path):
        assert time.monotonic() < deadline, "the hung upstream was never started"
        await asyncio.sleep(0.05)


@contextlib.asynccontextmanager
async def mcpkit_proxy(
    target: str, port: int, *options: str
) -> AsyncIterator[asyncio.subprocess.Process]:
    command = [sys.executable, "-m", "mcpkit", "proxy", target, "--transport", "http"]
    child = await asyncio.create_subprocess_exec(
        *command, "--port", str(port), *options, cwd=ROOT, stderr=asyncio.subprocess.PIPE
    )
    try:
        yield child
    finally:
        if child.returncode is None:
            child.kill()
            await child.wait()


def hung_command(pid_file: Path) -> str:
    return shlex.join([sys.executable, HUNG, str(pid_file)])


async def test_a_proxy_serves_within_its_start_bound_and_stops_on_sigterm(
    tmp_path: Path,
) -> None:
    pid_file, port = tmp_path / "pids", unused_port()
    url = f"http://127.0.0.1:{port}/mcp"
    options = ("--start-timeout", str(BOUND))
    async with mcpkit_proxy(hung_command(pid_file), port, *options) as child:
        began = time.monotonic()
        await asyncio.to_thread(wait_until_listening, url, BOUND + 20)
        assert time.monotonic() - began < BOUND + 15  # never, before: it waited forever
        async with Client(url, mode="handshake", timeout=30) as client:
            with pytest.raises(ProtocolError) as raised:
                await client.list_tools()
        assert raised.value.code == INTERNAL_ERROR
        assert "the upstream server is unavailable: it did not answer in time" in str(raised.value)
        child.terminate()
        await asyncio.wait_for(child.wait(), 20)
        assert child.stderr is not None
        said = (await child.stderr.read()).decode()
        assert "did not start: initialize got no answer within 2 s" in said
    assert len(pids(pid_file)) >= 2  # the start and the list's try again
    assert await all_gone(pid_file) == []


async def test_a_sigterm_during_the_start_stops_the_proxy_once_the_bound_passed(
    tmp_path: Path,
) -> None:
    pid_file, port = tmp_path / "pids", unused_port()
    async with mcpkit_proxy(hung_command(pid_file), port, "--start-timeout", str(BOUND)) as child:
        await started(pid_file)
        child.terminate()  # uvicorn notes it, and stops once the lifespan has started
        await asyncio.wait_for(child.wait(), BOUND + 15)  # before: never
    assert await all_gone(pid_file) == []


async def test_no_upstream_is_left_behind_when_the_proxy_is_killed(tmp_path: Path) -> None:
    pid_file, port = tmp_path / "pids", unused_port()
    async with mcpkit_proxy(hung_command(pid_file), port, "--start-timeout", "60") as child:
        await started(pid_file)
        child.kill()  # SIGKILL: nothing of the proxy runs to close its upstream
        await child.wait()
    assert await all_gone(pid_file) == []


async def test_a_gateway_serves_the_others_beside_a_hung_entry(tmp_path: Path) -> None:
    pid_file, port = tmp_path / "pids", unused_port()
    hung = {"command": sys.executable, "args": [HUNG, str(pid_file)]}  # no "timeout"
    config = tmp_path / "servers.json"
    servers = {"mine": {"command": MINE[0], "args": MINE[1:]}, "hung": hung}
    config.write_bytes(orjson.dumps({"mcpServers": servers}))
    url = f"http://127.0.0.1:{port}/mcp"
    async with mcpkit_proxy(str(config), port, "--start-timeout", str(BOUND)) as child:
        await asyncio.to_thread(wait_until_listening, url, BOUND + 20)
        async with Client(url, mode="per-request", timeout=30) as client:
            names = {tool.name for tool in await client.list_all_tools()}
            assert "mine__echo" in names
            assert not any(name.startswith("hung__") for name in names)
            with pytest.raises(ProtocolError) as raised:
                await client.call_tool("hung__anything")
        assert raised.value.code == INTERNAL_ERROR
        assert "'hung' is unavailable: it did not answer in time" in str(raised.value)
        child.terminate()
        await asyncio.wait_for(child.wait(), 20)
    assert await all_gone(pid_file) == []


async def test_a_hung_start_costs_a_call_its_entry_timeout_and_a_list_nothing(
    tmp_path: Path,
) -> None:
    """An entry's "timeout" bounds its start too, and the hung process is closed off the
    request's path (before: 8 s for "timeout": 3); a list does not wait for it."""
    pid_file = tmp_path / "pids"
    hung = {"command": sys.executable, "args": [HUNG, str(pid_file)], "timeout": 1.5}
    mine = {"command": MINE[0], "args": MINE[1:], "shared": True}  # started: lists at once
    config = {"mcpServers": {"mine": mine, "hung": hung}}
    async with Client(gateway(load_config(config)), mode="handshake", timeout=30) as client:
        began = time.monotonic()
        names = {tool.name for tool in await client.list_all_tools()}
        assert "mine__echo" in names
        assert time.monotonic() - began < 1.5
        began = time.monotonic()
        with pytest.raises(ProtocolError) as raised:
            await client.call_tool("hung__anything")
        assert time.monotonic() - began < 1.5 + 1.0
        assert "'hung' is unavailable: it did not answer in time" in str(raised.value)
    assert await all_gone(pid_file) == []


async def test_a_command_not_found_is_logged_with_why(caplog: pytest.LogCaptureFixture) -> None:
    config = {"mcpServers": {"nope": {"command": "mcpkit-no-such-command"}}}
    caplog.set_level(logging.WARNING, logger="mcpkit.gateway")
    async with Client(gateway(load_config(config)), mode="handshake", timeout=30) as client:
        with pytest.raises(ProtocolError) as raised:
            await client.call_tool("nope__anything")
    assert "'nope' is unavailable: it could not be started" in str(raised.value)
    logged = [record.getMessage() for record in caplog.records]
    assert any("'mcpkit-no-such-command' was not found" in line for line in logged), logged
