"""The gateway between real parts: two stdio upstreams (an mcpkit server and the official
SDK's server) behind one HTTP endpoint, reached by our Client and the official SDK's client."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from mcpkit import Client
from mcpkit.errors import ProtocolError
from mcpkit.gateway import gateway
from mcpkit.host import load_config
from mcpkit.types import TextContent
from tests.http.servers import serving, unused_port, wait_until_listening

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
MINE = [str(HERE / "gateway_upstream.py")]
OFFICIAL = [str(HERE.parent / "fixtures" / "official_full_server.py")]
JSONObject = dict[str, Any]


def configuration(**mine: Any) -> JSONObject:
    return {
        "mcpServers": {
            "mine": {"command": sys.executable, "args": MINE, "denyTools": ["secret"], **mine},
            "official": {
                "command": sys.executable,
                "args": OFFICIAL,
                "allowTools": ["add", "fail"],
            },
        }
    }


def text(result: Any) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


def sample(params: Any) -> JSONObject:
    said = params.messages[0].content.text
    return {"role": "assistant", "content": {"type": "text", "text": f"<{said}>"}, "model": "m"}


async def test_lists_are_namespaced_and_calls_routed_with_allow_and_deny() -> None:
    server = gateway(load_config(configuration()))
    async with (
        serving(server.http_app()) as base,
        Client(base + "/mcp", mode="handshake", timeout=30) as client,
    ):
        names = {tool.name for tool in await client.list_all_tools()}
        assert names == {
            "mine__echo",
            "mine__touch",
            "mine__ask",
            "mine__grow",
            "mine__die",
            "mine__hang",
            "mine__forget",
            "official__add",
            "official__fail",
        }
        assert text(await client.call_tool("mine__echo", {"text": "hi"})) == "echo hi"
        assert text(await client.call_tool("official__add", {"a": 2, "b": 40})) == "42"
        failed = await client.call_tool("official__fail", {"reason": "x"})
        assert failed.is_error  # a tool error stays an isError result
        for denied in ("mine__secret", "official__shout"):  # denyTools, not in allowTools
            with pytest.raises(ProtocolError) as raised:
                await client.call_tool(denied, {"text": "x"})
            assert raised.value.code == -32602
        prompts = {prompt.name for prompt in await client.list_all_prompts()}
        assert prompts == {"official__review"}
        prompted = await client.complete("language", "p", prompt="official__review")
        assert prompted.completion.values == ["python", "pascal", "perl"]
        prompt = await client.get_prompt("official__review", {"code": "x = 1"})
        assert "x = 1" in prompt.messages[0].content.text  # type: ignore[union-attr]
        resources = {r.uri: r.name for r in await client.list_all_resources()}
        assert resources["note://local/readme"] == "mine__readme"
        assert resources["memo://readme"] == "official__readme"
        mine = await client.read_resource("note://local/readme")
        assert mine.contents[0].text == "the upstream's readme"  # type: ignore[union-attr]
        completed = await client.complete("topic", "t", resource="memo://notes/{topic}")
        assert completed.completion.values == ["tea", "tennis"]  # the official server's
        note = await client.read_resource("memo://notes/tea")  # by the official template
        assert note.contents[0].text == "notes about tea"  # type: ignore[union-attr]


async def test_the_official_sdk_client_through_the_gateway() -> None:
    server = gateway(load_config(configuration()))
    async with (
        serving(server.http_app()) as base,
        streamable_http_client(base + "/mcp") as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        names = {tool.name for tool in (await session.list_tools()).tools}
        assert {"mine__echo", "official__add"} <= names
        assert "mine__secret" not in names
        added = await session.call_tool("official__add", {"a": 1, "b": 2})
        assert added.structured_content == {"result": 3}
        echoed = await session.call_tool("mine__echo", {"text": "yo"})
        assert echoed.content[0].text == "echo yo"  # type: ignore[union-attr]


async def test_sampling_and_list_changed_reach_the_session_that_caused_them() -> None:
    server = gateway(load_config(configuration()))
    changed: asyncio.Queue[str] = asyncio.Queue()
    async with (
        serving(server.http_app()) as base,
        Client(
            base + "/mcp",
            mode="handshake",
            timeout=30,
            sampling=sample,
            on_list_changed=changed.put_nowait,
        ) as client,
        Client(base + "/mcp", mode="handshake", timeout=30) as other,
    ):
        asked = await client.call_tool("mine__ask", {"question": "meaning?"})
        assert text(asked) == "model said <meaning?>"
        # The upstream's own answer, in this client's era (its upstream session is a
        # handshake-era one): the other client declared no sampling, a tool error.
        refused = await other.call_tool("mine__ask", {"question": "?"})
        assert refused.is_error and "'sampling'" in text(refused)
        await client.call_tool("mine__grow")
        assert await asyncio.wait_for(changed.get(), 20) == "tools"
        names = {tool.name for tool in await client.list_all_tools()}
        assert "mine__grown" in names
        assert "mine__grown" not in {tool.name for tool in await other.list_all_tools()}


async def test_logs_and_resource_updates_reach_the_subscribed_session() -> None:
    server = gateway(load_config(configuration()))
    logs: list[Any] = []
    updated: asyncio.Queue[str] = asyncio.Queue()
    async with (
        serving(server.http_app()) as base,
        Client(
            base + "/mcp",
            mode="handshake",
            timeout=30,
            on_log=logs.append,
            on_resource_updated=updated.put_nowait,
        ) as client,
    ):
        await client.set_logging_level("info")
        await client.call_tool("mine__echo", {"text": "hi"})
        await client.subscribe_resource("note://local/readme")
        await client.call_tool("mine__touch")
        assert await asyncio.wait_for(updated.get(), 20) == "note://local/readme"
    assert [entry.data for entry in logs] == ["echoing hi"]


async def test_an_upstream_that_cannot_start_is_reported_and_the_others_serve() -> None:
    config = configuration()
    config["mcpServers"]["broken"] = {"command": sys.executable, "args": ["-c", "exit(1)"]}
    server = gateway(load_config(config))
    async with (
        serving(server.http_app()) as base,
        Client(base + "/mcp", mode="handshake", timeout=30) as client,
    ):
        names = {tool.name for tool in await client.list_all_tools()}
        assert "official__add" in names
        assert not any(name.startswith("broken__") for name in names)
        with pytest.raises(ProtocolError) as raised:
            await client.call_tool("broken__anything")
        assert raised.value.code == -32603
        assert "'broken' is unavailable" in str(raised.value)


async def test_a_killed_upstream_is_reported_and_harms_nothing_else() -> None:
    server = gateway(load_config(configuration()))
    async with (
        serving(server.http_app()) as base,
        Client(base + "/mcp", mode="handshake", timeout=30) as client,
        Client(base + "/mcp", mode="handshake", timeout=30) as other,
    ):
        assert text(await other.call_tool("mine__echo", {"text": "a"})) == "echo a"
        with pytest.raises(ProtocolError) as raised:
            await client.call_tool("mine__die")
        assert raised.value.code == -32603
        assert "'mine' is unavailable" in str(raised.value)
        assert text(await client.call_tool("official__add", {"a": 1, "b": 1})) == "2"
        assert text(await other.call_tool("mine__echo", {"text": "b"})) == "echo b"
        assert text(await client.call_tool("mine__echo", {"text": "c"})) == "echo c"


async def test_a_hung_upstream_answers_an_error_naming_it_after_its_timeout() -> None:
    # The entry's timeout bounds its start too: long enough for a Python server to start on
    # a loaded machine.
    server = gateway(load_config(configuration(timeout=3)))
    async with (
        serving(server.http_app()) as base,
        Client(base + "/mcp", mode="handshake", timeout=30) as client,
    ):
        hung = asyncio.ensure_future(client.call_tool("mine__hang"))
        assert text(await client.call_tool("official__add", {"a": 1, "b": 1})) == "2"
        with pytest.raises(ProtocolError) as raised:
            await hung
        assert raised.value.code == -32603
        assert "'mine' is unavailable: it did not answer in time" in str(raised.value)
        assert text(await client.call_tool("mine__echo", {"text": "d"})) == "echo d"


async def test_a_shared_entry_has_one_upstream_for_every_session() -> None:
    server = gateway(load_config(configuration(shared=True)))
    async with serving(server.http_app()) as base:
        for _ in range(2):
            async with Client(base + "/mcp", mode="handshake", timeout=30) as client:
                assert text(await client.call_tool("mine__echo", {"text": "x"})) == "echo x"
        assert server.upstreams["mine"].upstreams.opened == 1
        # Not shared: its shared client (for sessionless requests) and one per session (our
        # Client lists the tools to check a call's result against its outputSchema).
        assert server.upstreams["official"].upstreams.opened == 3


async def test_mcpkit_proxy_serves_a_configuration_file(tmp_path: Path) -> None:
    config = tmp_path / "servers.json"
    config.write_bytes(orjson.dumps(configuration()))
    port = unused_port()
    command = [
        *(sys.executable, "-m", "mcpkit", "proxy", str(config)),
        *("--transport", "http", "--port", str(port)),
    ]
    child = await asyncio.create_subprocess_exec(*command, cwd=ROOT)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        await asyncio.to_thread(wait_until_listening, url, 30)
        async with Client(url, mode="per-request", timeout=30) as client:
            assert text(await client.call_tool("official__add", {"a": 1, "b": 2})) == "3"
            assert text(await client.call_tool("mine__echo", {"text": "z"})) == "echo z"
    finally:
        child.terminate()
        await child.wait()


async def test_a_2026_client_is_asked_for_sampling_in_input_required_rounds() -> None:
    server = gateway(load_config(configuration()))
    async with (
        serving(server.http_app()) as base,
        Client(base + "/mcp", mode="per-request", timeout=30, sampling=sample) as client,
    ):
        asked = await client.call_tool("mine__ask", {"question": "meaning?"})
        assert text(asked) == "model said <meaning?>"
        assert text(await client.call_tool("official__add", {"a": 3, "b": 4})) == "7"


async def test_the_uri_routing_follows_what_servers_list_now() -> None:
    """A URI a server stopped offering is no longer routed to it: two servers offering the
    readme are ambiguous; once one forgets it and the list is read again, reads go to the
    other (the table is rebuilt from each full list, not only added to)."""
    entry = {"command": sys.executable, "args": MINE}
    config = load_config({"mcpServers": {"a": entry, "b": entry}})
    async with Client(gateway(config), timeout=30) as client:
        await client.list_all_resources()
        with pytest.raises(ProtocolError) as both:
            await client.read_resource("note://local/readme")
        assert "offered by several servers (a, b)" in both.value.message
        await client.call_tool("b__forget")
        listed = await client.request("resources/list")  # now, not from the client's cache
        assert [item["uri"] for item in listed["resources"]] == ["note://local/readme"]
        read = await client.read_resource("note://local/readme")
        assert read.contents[0].text == "the upstream's readme"  # type: ignore[union-attr]
