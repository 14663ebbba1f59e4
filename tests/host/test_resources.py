"""HostResources: two real servers offering the same URI, templates, prompts and completion
routed to the right server; roots each server's own; a flood of logs bounded; and a modern
server's list changes followed (over subscriptions/listen)."""

from __future__ import annotations

import asyncio
import sys
import textwrap
from pathlib import Path

import pytest

from mcpkit.errors import ProtocolError
from mcpkit.host import HostPrompts, HostServers, HostTools, Timing, load_config
from mcpkit.host.resources import AmbiguousResource, HostResources

SERVER = str(Path(__file__).with_name("host_server.py"))


def two_servers(**extra: dict[str, object]) -> HostServers:
    entries = {
        name: {"command": sys.executable, "args": [SERVER, name], **extra.get(name, {})}
        for name in ("alpha", "beta")
    }
    return HostServers(load_config({"mcpServers": entries}), timing=Timing(connect_timeout=30))


async def test_resources_of_two_servers_read_from_the_right_one() -> None:
    servers = two_servers()
    try:
        await servers.start()
        resources = HostResources(servers)
        listed = {(r.server, r.original) for r in await resources.list()}
        assert listed == {
            ("alpha", "memo://shared"),
            ("alpha", "memo://alpha"),
            ("beta", "memo://shared"),
            ("beta", "memo://beta"),
        }

        private = await resources.read_resource("memo://beta")  # one server lists it
        assert private.contents[0].text == "the private memo of beta"
        with pytest.raises(AmbiguousResource, match="alpha, beta"):
            await resources.read_resource("memo://shared")
        shared = await resources.read_resource("memo://shared", server="alpha")
        assert shared.contents[0].text == "the shared memo of alpha"
        with pytest.raises(ProtocolError, match="not found"):  # beta's own answer
            await resources.read_resource("memo://alpha", server="beta")

        # a URI no server lists, but one server's template fits: routed there
        note = await resources.read_resource("notes://beta/42")
        assert note.contents[0].text == "note 42 of beta"
        templates = {t.original: t.server for t in await resources.templates.list()}
        assert templates == {"notes://alpha/{id}": "alpha", "notes://beta/{id}": "beta"}
        with pytest.raises(KeyError, match="no ready server"):
            await resources.read_resource("unknown://thing")

        done = await resources.templates.complete("notes://alpha/{id}", "id", "g")
        assert done.completion.values == ["gamma"]
        tools = {t.name for t in await HostTools(servers).list()}  # 8 tools each, in 4 pages
        assert {"alpha__target", "alpha__slow", "beta__ask_model", "beta__target"} <= tools
        assert len(tools) == 16
        prompts = HostPrompts(servers)
        assert {p.name for p in await prompts.list()} == {"alpha__greet", "beta__greet"}
        greeting = await prompts.get_prompt("beta__greet", {"person": "ada"})
        assert greeting.messages[0].content.text == "beta greets ada"
        people = await prompts.complete("alpha__greet", "person", "a")
        assert people.completion.values == ["ada", "alan"]
    finally:
        await servers.aclose()


async def test_each_server_sees_only_its_own_roots(tmp_path: Path) -> None:
    mine, theirs = tmp_path / "alpha-only", tmp_path / "beta-only"
    servers = two_servers(alpha={"roots": [str(mine)]}, beta={"roots": [str(theirs)]})
    try:
        await servers.start()
        tools = HostTools(servers)
        seen_by_alpha = (await tools.call_tool("alpha__roots")).structured_content
        seen_by_beta = (await tools.call_tool("beta__roots")).structured_content
        assert seen_by_alpha == {"result": [mine.as_uri()]}
        assert seen_by_beta == {"result": [theirs.as_uri()]}
    finally:
        await servers.aclose()


async def test_a_server_flooding_logs_costs_the_others_nothing() -> None:
    config = load_config(
        {
            "mcpServers": {
                name: {"command": sys.executable, "args": [SERVER, name]}
                for name in ("alpha", "beta")
            }
        }
    )
    servers = HostServers(config, log_limit=50, client_options={"mode": "handshake"})
    try:
        await servers.start()
        tools = HostTools(servers)
        await tools.list()
        flood = asyncio.create_task(tools.call_tool("alpha__flood", {"n": 20_000}))
        await asyncio.sleep(0.05)
        started = asyncio.get_running_loop().time()
        for i in range(20):  # beta answers promptly all through the flood
            answer = await tools.call_tool("beta__target", {"text": str(i)})
            assert answer.content[0].text == f"beta: {i}"
        elapsed = asyncio.get_running_loop().time() - started
        assert (await flood).content[0].text == "flooded"
        kept = servers.logs("alpha")
        assert len(kept) == 50  # bounded: the last 50 of 20,000
        assert kept[-1]["data"] == "line 19999"
        assert servers.logs("beta") == []
        assert elapsed < 5.0, f"beta's 20 calls took {elapsed:.2f} s during alpha's flood"
    finally:
        await servers.aclose()


async def test_a_modern_servers_tool_changes_are_followed() -> None:
    servers = two_servers()
    try:
        await servers.start()
        assert servers.client("alpha").era == "per-request"
        tools = HostTools(servers)
        before = {t.name: t.item.description for t in await tools.list()}
        assert before["alpha__target"] == "Echo the text."
        await tools.call_tool("alpha__mutate")
        for _ in range(100):  # the list_changed arrives on alpha's listen subscription
            after = {t.name: t.item.description for t in await tools.list()}
            if after["alpha__target"] != before["alpha__target"]:
                break
            await asyncio.sleep(0.05)
        assert "id_rsa" in (after["alpha__target"] or "")
        assert after["beta__target"] == "Echo the text."
    finally:
        await servers.aclose()


SAME_NAMES = textwrap.dedent(
    """
    from mcpkit import Server

    server = Server("files")
    server.add_resource("file:///a/README.md", "the first", name="README.md")
    server.add_resource("file:///b/README.md", "the second", name="README.md")
    server.add_resource("file:///c/README.md", "the third", name="README.md-2")
    server.run()
    """
)


async def test_resources_with_the_same_name_are_each_listed_once_and_readable(
    tmp_path: Path,
) -> None:
    script = tmp_path / "files.py"
    script.write_text(SAME_NAMES)
    config = load_config(
        {"mcpServers": {"files": {"command": sys.executable, "args": [str(script)]}}}
    )
    servers = HostServers(config, timing=Timing(connect_timeout=30))
    try:
        await servers.start()
        resources = HostResources(servers)
        listed = [(r.name, r.original) for r in await resources.list()]
        assert len(listed) == 3 and len({name for name, _ in listed}) == 3  # none collapsed
        assert {uri for _, uri in listed} == {f"file:///{d}/README.md" for d in "abc"}
        for name, uri in listed:
            assert resources.resolve(name).original == uri  # every public name reaches its URI
        for directory, text in (("a", "the first"), ("b", "the second"), ("c", "the third")):
            read = await resources.read_resource(f"file:///{directory}/README.md")
            assert read.contents[0].text == text
    finally:
        await servers.aclose()
