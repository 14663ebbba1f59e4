"""HostServers keeps configured servers connected, each in its own client: real stdio servers
(ours, a command that does not exist, one that never answers its handshake, one that crashes)
and an HTTP one, started together; a dead one costs the others nothing."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from mcpkit.errors import ConnectionClosed
from mcpkit.host import HostServers, HostTools, ServerState, ServerUnavailable, Timing, load_config
from tests.http.servers import script_serving, unused_port, wait_until_listening

ROOT = Path(__file__).resolve().parents[2]
TASKS = str(ROOT / "tests" / "fixtures" / "task_server.py")
SILENT = str(ROOT / "tests" / "fixtures" / "silent.py")
CRASHY = textwrap.dedent(
    """
    import os
    from mcpkit import Server

    server = Server("crashy")

    @server.tool()
    def pid() -> int:
        return os.getpid()

    @server.tool()
    def crash() -> str:
        os._exit(3)

    server.run()
    """
)
FAST = Timing(connect_timeout=3.0, restart_delay=0.05, max_delay=0.2, max_restarts=2)


async def test_servers_start_together_and_a_dead_one_costs_the_others_nothing(
    tmp_path: Path,
) -> None:
    config = load_config(
        {
            "mcpServers": {
                "good": {"command": sys.executable, "args": [TASKS]},
                "missing": {"command": "no-such-mcp-server-command"},
                "silent": {"command": sys.executable, "args": [SILENT, str(tmp_path / "pid")]},
                "broken": {"command": "run", "env": {"K": "${NOT_SET_ANYWHERE}"}},
            }
        },
        environ={},
    )
    servers = HostServers(config, timing=FAST, client_options={"mode": "handshake"})
    started = time.monotonic()
    try:
        await servers.start()
        took = time.monotonic() - started
        status = servers.status()
        assert status["good"].state is ServerState.READY
        assert {t.name for t in await servers.client("good").list_all_tools()} >= {"count"}
        assert status["missing"].state is ServerState.FAILED
        assert "no-such-mcp-server-command" in (status["missing"].error or "")
        assert status["silent"].state is ServerState.FAILED
        assert status["silent"].error == "no answer to the handshake within 3 s"
        assert (
            status["broken"].state is ServerState.FAILED
            and "NOT_SET_ANYWHERE" in status["broken"].error
        )
        assert took < FAST.connect_timeout + 2  # the silent one's timeout, not a sum
        with pytest.raises(ServerUnavailable, match="'missing' is failed"):
            servers.client("missing")
        with pytest.raises(KeyError):
            servers.client("unknown")
    finally:
        await servers.aclose()


async def test_a_crashed_server_is_restarted_with_backoff(tmp_path: Path) -> None:
    script = tmp_path / "crashy.py"
    script.write_text(CRASHY)
    config = load_config(
        {"mcpServers": {"crashy": {"command": sys.executable, "args": [str(script)]}}}
    )
    servers = HostServers(config, timing=FAST, client_options={"mode": "handshake"})
    try:
        await servers.start()
        first = servers.client("crashy")
        before = (await first.call_tool("pid")).structured_content
        with pytest.raises(ConnectionClosed):  # the process dies under the call
            await first.call_tool("crash")
        for _ in range(200):
            if servers.status()["crashy"].state is ServerState.READY and servers.ready().get(
                "crashy"
            ) not in (None, first):
                break
            await asyncio.sleep(0.02)
        status = servers.status()["crashy"]
        assert status.state is ServerState.READY and status.restarts == 1
        assert status.error == "the server process exited with code 3"  # why, kept
        after = (await servers.client("crashy").call_tool("pid")).structured_content
        assert after != before  # a new process
    finally:
        await servers.aclose()


async def test_disable_and_enable_at_run_time_and_an_http_server() -> None:
    with script_serving(TASKS) as url:
        config = load_config(
            {
                "mcpServers": {
                    "local": {"command": sys.executable, "args": [TASKS]},
                    "remote": {"type": "http", "url": url},
                    "later": {"command": sys.executable, "args": [TASKS], "disabled": True},
                }
            }
        )
        servers = HostServers(config, timing=FAST)
        try:
            await servers.start()
            states = {name: s.state for name, s in servers.status().items()}
            assert states == {
                "local": ServerState.READY,
                "remote": ServerState.READY,
                "later": ServerState.DISABLED,
            }
            assert (await servers.client("remote").call_tool("count", {"to": 1})).content
            await servers.disable("local")
            assert servers.status()["local"].state is ServerState.DISABLED
            with pytest.raises(ServerUnavailable, match="disabled"):
                servers.client("local")
            assert (await servers.enable("later")).state is ServerState.READY
            assert (await servers.enable("local")).state is ServerState.READY
            assert set(servers.ready()) == {"local", "remote", "later"}
        finally:
            await servers.aclose()


@pytest.mark.parametrize("mode", ["auto", "handshake"])
async def test_an_http_server_that_went_away_is_reconnected_when_it_is_back(mode: str) -> None:
    port = unused_port()
    url = f"http://127.0.0.1:{port}/mcp"

    def serve() -> subprocess.Popen[bytes]:
        process = subprocess.Popen([sys.executable, TASKS, str(port)], stderr=subprocess.DEVNULL)
        wait_until_listening(url)
        return process

    process = serve()
    timing = Timing(connect_timeout=3.0, restart_delay=0.05, max_delay=0.2, max_restarts=50)
    config = load_config({"mcpServers": {"remote": {"url": url}}})
    servers = HostServers(config, timing=timing, client_options={"mode": mode})
    try:
        await servers.start()
        tools = HostTools(servers)
        assert not (await tools.call_tool("remote__count", {"to": 1})).is_error
        process.kill()  # gone without a goodbye
        process.wait()
        with pytest.raises((ConnectionClosed, ServerUnavailable)):  # the latter: noticed first
            await tools.call_tool("remote__count", {"to": 1})
        for _ in range(100):  # the host notices the client closed
            if servers.status()["remote"].state is ServerState.RESTARTING:
                break
            await asyncio.sleep(0.01)
        assert servers.status()["remote"].state is ServerState.RESTARTING
        process = serve()
        for _ in range(100):
            if servers.status()["remote"].state is ServerState.READY:
                break
            await asyncio.sleep(0.05)
        status = servers.status()["remote"]
        assert status.state is ServerState.READY and status.restarts >= 1
        assert not (await tools.call_tool("remote__count", {"to": 1})).is_error
    finally:
        await servers.aclose()
        process.kill()
        process.wait()
