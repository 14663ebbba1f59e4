"""A remote server behind OAuth in a host: each remote server gets an OAuth client of its own
(`auth=`), completes the flow against our authorization server (examples/oauth_server.py,
approving at once), and is used beside a stdio server; without credentials it is failed with
the reason, and the others are unaffected."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from mcpkit.auth.client import Headless, OAuth
from mcpkit.host import HostServers, HostTools, ServerConfig, ServerState, Timing, load_config
from tests.auth.test_oauth_example import example  # noqa: F401 - the fixture, shared

SERVER = str(Path(__file__).with_name("host_server.py"))


@pytest.fixture(scope="module")
def protected(example: str) -> str:  # noqa: F811 - the imported fixture
    """The MCP endpoint of examples/oauth_server.py (approving at once, in memory)."""
    return f"{example}/mcp"


def config(url: str) -> Any:
    return load_config(
        {
            "mcpServers": {
                "remote": {"url": url},
                "local": {"command": sys.executable, "args": [SERVER, "local"]},
            }
        }
    )


async def test_each_remote_server_logs_in_with_its_own_oauth_client(protected: str) -> None:
    asked_for: list[str] = []

    def auth(server: ServerConfig) -> OAuth:
        asked_for.append(server.name)
        return OAuth(approval=Headless())

    servers = HostServers(config(protected), auth=auth, timing=Timing(connect_timeout=30))
    try:
        await servers.start()
        assert {n: s.state for n, s in servers.status().items()} == {
            "remote": ServerState.READY,
            "local": ServerState.READY,
        }
        assert asked_for == ["remote"]  # stdio servers take credentials from their env
        tools = HostTools(servers)
        whoami = await tools.call_tool("remote__whoami")
        assert "mcp" in whoami.content[0].text.split(":")[-1]
        assert (await tools.call_tool("local__target", {"text": "x"})).content[0].text == "local: x"
    finally:
        await servers.aclose()


async def test_without_credentials_the_remote_server_fails_with_its_reason(protected: str) -> None:
    servers = HostServers(config(protected), timing=Timing(connect_timeout=30))
    try:
        await servers.start()
        status = servers.status()
        assert status["local"].state is ServerState.READY
        assert status["remote"].state is ServerState.FAILED
        assert "401" in (status["remote"].error or "")
    finally:
        await servers.aclose()
