"""HostTools: one view of the tools of several real servers (ours, the official SDK's,
FastMCP's, server-everything), collision-free names with the original recoverable, allow / deny
lists, calls routed to the right server, and a server's list refreshed after its
tools/list_changed."""

from __future__ import annotations

import asyncio
import logging
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from mcpkit.host import HostPrompts, HostServers, HostTools, Timing, load_config
from tests.peers import fastmcp_python, node_env, npm_command

ROOT = Path(__file__).resolve().parents[2]
TASKS = str(ROOT / "tests" / "fixtures" / "task_server.py")
OFFICIAL = str(ROOT / "tests" / "fixtures" / "official_server.py")
FASTMCP = str(ROOT / "tests" / "client" / "fastmcp_server.py")
GROWING = textwrap.dedent(
    """
    from mcpkit import Server

    server = Server("growing")

    def extra() -> str:
        return "new"

    @server.tool()
    def grow() -> str:
        server.add_tool(extra, name="extra")
        return "grown"

    server.run()
    """
)


def other_implementations() -> dict[str, dict[str, Any]]:
    """mcpServers entries for the stdio servers of the official SDK, FastMCP and
    server-everything."""
    everything = npm_command("mcp-server-everything")
    return {
        "official sdk": {"command": sys.executable, "args": [OFFICIAL]},
        "fastmcp": {"command": str(fastmcp_python()), "args": [FASTMCP]},
        "everything": {
            "command": everything[0],
            "args": [*everything[1:], "stdio"],
            "env": node_env(),
        },
    }


async def test_tools_of_four_implementations_in_one_view_with_calls_routed() -> None:
    entries = other_implementations()
    entries["everything"]["allowTools"] = ["echo", "get-sum"]
    ours = {"command": sys.executable, "args": [TASKS], "denyTools": ["forever"]}
    config = load_config({"mcpServers": {"ours": ours, **entries}})
    servers = HostServers(config, timing=Timing(connect_timeout=30))
    try:
        await servers.start()
        tools = HostTools(servers)
        listed = {tool.name: tool for tool in await tools.list()}
        assert set(listed) == {
            "ours__count",
            "ours__nightly",
            "official_sdk__add",
            "official_sdk__echo",
            "fastmcp__add",
            "everything__echo",
            "everything__get-sum",
        }
        assert (listed["official_sdk__add"].server, listed["official_sdk__add"].original) == (
            "official sdk",
            "add",
        )
        official = await tools.call_tool("official_sdk__add", {"a": 2, "b": 3})
        fast = await tools.call_tool("fastmcp__add", {"a": 20, "b": 22})
        echoed = await tools.call_tool("everything__echo", {"message": "hi"})
        counted = await tools.call_tool("ours__count", {"to": 1})
        assert official.structured_content == {"result": 5}
        assert fast.structured_content == {"result": 42}
        assert echoed.content[0].text == "Echo: hi"  # type: ignore[union-attr]
        assert counted.content[0].text == "counted to 1"  # type: ignore[union-attr]
        for hidden in ("ours__forever", "everything__get-env", "nowhere__x"):
            with pytest.raises(KeyError):
                await tools.call_tool(hidden)
    finally:
        await servers.aclose()


async def test_prefixes_never_collide_and_a_list_changed_refreshes_the_view(
    tmp_path: Path,
) -> None:
    script = tmp_path / "growing.py"
    script.write_text(GROWING)
    config = load_config(
        {
            "mcpServers": {
                "team/x": {"command": sys.executable, "args": [TASKS], "allowTools": ["count"]},
                "team x": {"command": sys.executable, "args": [TASKS], "allowTools": ["count"]},
                "grows": {"command": sys.executable, "args": [str(script)]},
            }
        }
    )
    servers = HostServers(config, client_options={"mode": "handshake"})
    try:
        await servers.start()
        tools = HostTools(servers)
        names = [tool.name for tool in await tools.list()]
        assert names == ["team_x__count", "team_x-2__count", "grows__grow"]
        assert tools.resolve("team_x-2__count").server == "team x"
        assert (await tools.call_tool("grows__grow")).content[0].text == "grown"  # type: ignore[union-attr]
        for _ in range(100):  # the list_changed notification arrives on its own
            names = [tool.name for tool in await tools.list()]
            if "grows__extra" in names:
                break
            await asyncio.sleep(0.02)
        assert "grows__extra" in names
        assert (await tools.call_tool("grows__extra")).content[0].text == "new"  # type: ignore[union-attr]
    finally:
        await servers.aclose()


async def test_prompts_of_several_servers_in_one_view_with_gets_routed() -> None:
    prompts_server = str(ROOT / "tests" / "fixtures" / "prompts_server.py")
    config = load_config(
        {
            "mcpServers": {
                "team a": {"command": sys.executable, "args": [prompts_server]},
                "team-b": {"command": sys.executable, "args": [prompts_server]},
                "no prompts": {"command": sys.executable, "args": [TASKS]},
            }
        }
    )
    servers = HostServers(config)
    try:
        await servers.start()
        prompts = HostPrompts(servers)
        names = [prompt.name for prompt in await prompts.list()]
        assert names == ["team_a__review", "team_a__stack", "team-b__review", "team-b__stack"]
        assert (
            prompts.resolve("team-b__stack").server,
            prompts.resolve("team-b__stack").original,
        ) == (
            "team-b",
            "stack",
        )
        got = await prompts.get_prompt("team-b__stack", {"language": "rust", "framework": "axum"})
        assert got.messages[0].content.text == "A axum project in rust"  # type: ignore[union-attr]
        with pytest.raises(KeyError, match="no prompt named"):
            await prompts.get_prompt("no_prompts__x")
    finally:
        await servers.aclose()


@pytest.mark.parametrize("mode", ["auto", "handshake"])
async def test_a_server_without_prompts_or_resources_is_skipped_silently(
    mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    from mcpkit.host import HostResources

    prompts_server = str(ROOT / "tests" / "fixtures" / "prompts_server.py")
    config = load_config(
        {
            "mcpServers": {
                "tools only": {"command": sys.executable, "args": [TASKS]},
                "prompts": {"command": sys.executable, "args": [prompts_server]},
            }
        }
    )
    servers = HostServers(config, client_options={"mode": mode})
    try:
        await servers.start()
        prompts, resources = HostPrompts(servers), HostResources(servers)
        with caplog.at_level(logging.DEBUG, logger="mcpkit.host"):
            for _ in range(3):  # as a front end lists them, again and again
                names = [prompt.name for prompt in await prompts.list()]
                assert names == ["prompts__review", "prompts__stack"]
                await resources.list()
                await resources.templates.list()
        noise = [r for r in caplog.records if r.levelno >= logging.INFO]
        assert noise == [], [r.getMessage() for r in noise]
    finally:
        await servers.aclose()
