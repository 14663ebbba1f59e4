"""An HTTP server that goes away and comes back (a real uvicorn subprocess, killed and started
again on the same port): the host takes it for gone as soon as a call finds it gone, a call to
it names the server and its state (never "no tool named" for a tool it listed), reconnection
keeps trying past any fixed number of attempts, and the server is used again once it is
back."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from mcpkit.errors import ConnectionClosed
from mcpkit.host import (
    HostPrompts,
    HostResources,
    HostServers,
    HostTools,
    ServerState,
    ServerStatus,
    ServerUnavailable,
    Timing,
    load_config,
)
from mcpkit.host.consent import ConsentPolicy
from mcpkit.host.host import Host
from tests.http.servers import unused_port, wait_until_listening

ROOT = Path(__file__).resolve().parents[2]
TASKS = str(ROOT / "tests" / "fixtures" / "task_server.py")
# What a call to a server just killed raises: ConnectionClosed when the call is the first to
# find out, ServerUnavailable when its client's transport already had (its stream dropped).
GONE = (ConnectionClosed, ServerUnavailable)


class Remote:
    """The task server over Streamable HTTP on one port, stopped and started at will."""

    def __init__(self) -> None:
        self.port = unused_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        argv = [sys.executable, TASKS, str(self.port)]
        self.process = subprocess.Popen(argv, stderr=subprocess.DEVNULL)
        wait_until_listening(self.url, seconds=30)

    def kill(self) -> None:  # gone without a goodbye
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None


@pytest.fixture
def remote() -> Iterator[Remote]:
    server = Remote()
    server.start()
    try:
        yield server
    finally:
        server.kill()


def watch(servers: HostServers) -> asyncio.Queue[ServerStatus]:
    changes: asyncio.Queue[ServerStatus] = asyncio.Queue()
    servers.status_listeners.append(changes.put_nowait)
    return changes


async def until(
    changes: asyncio.Queue[ServerStatus], wanted: Callable[[ServerStatus], bool]
) -> ServerStatus:
    """The first status told to the listener that is `wanted`, or one that is failed."""
    async with asyncio.timeout(60):
        while True:
            status = await changes.get()
            if wanted(status) or status.state is ServerState.FAILED:
                return status


@pytest.mark.parametrize("mode", ["auto", "handshake"])
async def test_a_server_gone_is_unavailable_at_once_and_reconnected_as_long_as_it_takes(
    remote: Remote, mode: str
) -> None:
    # The default max_restarts (None): keep trying. Short delays: many attempts while it is down.
    timing = Timing(connect_timeout=5.0, restart_delay=0.01, max_delay=0.05)
    assert timing.max_restarts is None
    config = load_config({"mcpServers": {"remote": {"url": remote.url}}})
    servers = HostServers(config, timing=timing, client_options={"mode": mode})
    changes = watch(servers)
    try:
        await servers.start()
        tools = HostTools(servers)
        assert "remote__count" in [tool.name for tool in await tools.list()]
        remote.kill()
        # The call finds it gone (ConnectionClosed), unless its transport saw it go first.
        with pytest.raises(GONE):
            await tools.call_tool("remote__count", {"to": 1})
        assert servers.status()["remote"].state is ServerState.RESTARTING  # known now, not later
        status = await until(changes, lambda s: s.state is ServerState.RESTARTING)
        assert status.state is ServerState.RESTARTING and status.error

        await tools.list()  # as the agent does before each turn: remote's tools are not offered
        with pytest.raises(ServerUnavailable) as raised:  # not KeyError "no tool named"
            await tools.call_tool("remote__count", {"to": 1})
        assert "'remote' is restarting" in str(raised.value)
        assert raised.value.status.state is ServerState.RESTARTING

        # Far more attempts than the old fixed limit (5 in a row), and still trying.
        status = await until(changes, lambda s: s.restarts >= 12)
        assert status.state is ServerState.RESTARTING and status.restarts >= 12

        remote.start()
        status = await until(changes, lambda s: s.state is ServerState.READY)
        assert status.state is ServerState.READY
        assert (await tools.call_tool("remote__count", {"to": 1})).content
    finally:
        await servers.aclose()


async def test_a_call_that_finds_the_server_gone_marks_it_restarting_before_returning(
    remote: Remote,
) -> None:
    # The first reconnection attempt only after 30 s: the state below is what finding the
    # server gone did (the call, or its transport before it), not a failed reconnection.
    timing = Timing(connect_timeout=5.0, restart_delay=30.0, max_delay=30.0)
    config = load_config({"mcpServers": {"remote": {"url": remote.url}}})
    servers = HostServers(config, timing=timing, client_options={"mode": "handshake"})
    try:
        await servers.start()
        tools = HostTools(servers)
        await tools.list()
        remote.kill()
        with pytest.raises(GONE):
            await tools.call_tool("remote__count", {"to": 1})
        status = servers.status()["remote"]
        assert status.state is ServerState.RESTARTING
        assert status.error  # why it is taken for gone
    finally:
        await servers.aclose()


async def test_max_restarts_still_bounds_the_attempts_when_given(remote: Remote) -> None:
    timing = Timing(connect_timeout=5.0, restart_delay=0.01, max_delay=0.02, max_restarts=3)
    config = load_config({"mcpServers": {"remote": {"url": remote.url}}})
    servers = HostServers(config, timing=timing, client_options={"mode": "handshake"})
    changes = watch(servers)
    try:
        await servers.start()
        tools = HostTools(servers)
        await tools.list()
        remote.kill()
        with pytest.raises(GONE):
            await tools.call_tool("remote__count", {"to": 1})
        status = await until(changes, lambda s: False)  # until failed
        assert (status.state, status.restarts) == (ServerState.FAILED, 3)
        with pytest.raises(ServerUnavailable, match="'remote' is failed"):
            await tools.call_tool("remote__count", {"to": 1})
    finally:
        await servers.aclose()


async def test_the_agents_call_to_a_server_gone_says_which_server_and_why(remote: Remote) -> None:
    from mcpkit.host.providers import ScriptedProvider

    use = {"type": "tool_use", "id": "u1", "name": "remote__count", "input": {"to": 1}}
    model = ScriptedProvider([{"content": [use]}, "it is down"])
    timing = Timing(connect_timeout=5.0, restart_delay=30.0, max_delay=30.0)
    consent = ConsentPolicy(rules={"remote": {"*": "allow"}})
    config = {"mcpServers": {"remote": {"url": remote.url}}}
    async with Host(config, provider=model, consent=consent, timing=timing) as host:
        await host.tools.list()
        remote.kill()
        with pytest.raises(GONE):
            await host.tools.call_tool("remote__count", {"to": 1})
        assert await host.agent().send("count") == "it is down"
    (result,) = model.requests[1].messages[-1]["content"]
    text = result["content"][0]["text"]
    assert result["isError"] and "server 'remote' is restarting" in text
    assert "no tool named" not in text


async def test_prompts_and_resources_of_a_server_gone_name_it_too() -> None:
    server = str(Path(__file__).with_name("host_server.py"))
    entries = {name: {"command": sys.executable, "args": [server, name]} for name in ("a", "b")}
    timing = Timing(connect_timeout=30.0, restart_delay=30.0, max_delay=30.0)
    servers = HostServers(load_config({"mcpServers": entries}), timing=timing)
    try:
        await servers.start()
        tools, prompts, resources = HostTools(servers), HostPrompts(servers), HostResources(servers)
        await prompts.list()
        await resources.list()
        with pytest.raises(GONE):
            await tools.call_tool("a__crash")  # the process exits under the call
        assert servers.status()["a"].state is ServerState.RESTARTING
        await prompts.list()
        await resources.list()
        with pytest.raises(ServerUnavailable, match="'a' is restarting"):
            await prompts.get_prompt("a__greet", {"person": "ada"})
        with pytest.raises(ServerUnavailable, match="'a' is restarting"):
            await resources.read_resource("memo://a")
        assert (await resources.read_resource("memo://b")).contents[0].text  # b is fine
        with pytest.raises(KeyError, match="no ready server offers"):
            await resources.read_resource("memo://nobody")
    finally:
        await servers.aclose()


@pytest.mark.parametrize("mode", ["auto", "handshake"])
async def test_a_server_gone_is_restarting_without_waiting_for_a_call(
    remote: Remote, mode: str
) -> None:
    # Its client's open stream (listen, or the legacy GET stream) drops: that is enough.
    timing = Timing(connect_timeout=5.0, restart_delay=30.0, max_delay=30.0)
    config = load_config({"mcpServers": {"remote": {"url": remote.url}}})
    servers = HostServers(config, timing=timing, client_options={"mode": mode})
    changes = watch(servers)
    try:
        await servers.start()
        assert servers.status()["remote"].state is ServerState.READY
        remote.kill()
        status = await until(changes, lambda s: s.state is ServerState.RESTARTING)  # no call made
        assert status.state is ServerState.RESTARTING and status.restarts == 0
        with pytest.raises(ServerUnavailable, match="'remote' is restarting"):
            await HostTools(servers).call_tool("remote__count", {"to": 1})
    finally:
        await servers.aclose()
