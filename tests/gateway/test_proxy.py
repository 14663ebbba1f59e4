"""The proxy in front of an mcpkit upstream in this process: each forwarded feature, the
upstream-session policy, and era bridging between our own client and server."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from mcpkit import Client
from mcpkit.client import InputRequired
from mcpkit.errors import ProtocolError
from mcpkit.gateway import proxy
from mcpkit.types import TextContent
from tests.gateway import upstream_app
from tests.gateway.upstream_app import server as upstream
from tests.http.servers import serving

JSONObject = dict[str, Any]


def text(result: Any) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


async def test_the_proxy_shows_the_upstreams_surface() -> None:
    async with Client(proxy(upstream)) as client:
        assert client.server_info["name"] == "upstream"
        assert client.server_info["version"] == "1.2.3"
        assert client.instructions == "Use add to add."
        assert client.server_capabilities == upstream.capabilities()
        names = {tool.name for tool in await client.list_all_tools()}
        assert {"add", "fail", "ask_llm", "hang"} <= names


async def test_a_call_carries_arguments_meta_and_progress() -> None:
    progress: list[tuple[float, float | None, str | None]] = []
    async with Client(proxy(upstream)) as client:
        result = await client.request(
            "tools/call",
            {"name": "add", "arguments": {"a": 2, "b": 3}, "_meta": {"trace": "t-1"}},
            on_progress=lambda p, t, m: progress.append((p, t, m)),
        )
    assert result["structuredContent"] == {"result": 5}
    assert progress == [(1, 2, "half"), (2, 2, "done")]
    meta = upstream_app.seen["meta"][-1]
    assert meta["trace"] == "t-1"  # the caller's _meta arrives; its progress token is the hop's
    assert "progressToken" in meta


async def test_tool_errors_stay_results_and_protocol_errors_keep_their_code() -> None:
    async with Client(proxy(upstream)) as client:
        failed = await client.call_tool("fail")
        assert failed.is_error and "failed on purpose" in text(failed)
        async with Client(upstream) as direct:
            with pytest.raises(ProtocolError) as expected:
                await direct.read_resource("memo://nothing")
        with pytest.raises(ProtocolError) as got:
            await client.read_resource("memo://nothing")
    assert (got.value.code, got.value.message) == (expected.value.code, expected.value.message)


async def test_prompts_resources_templates_and_completion() -> None:
    async with Client(proxy(upstream)) as client:
        assert [p.name for p in await client.list_all_prompts()] == ["review"]
        prompt = await client.get_prompt("review", {"code": "x = 1"})
        assert prompt.messages[0].content.text == "Review: x = 1"  # type: ignore[union-attr]
        assert [str(r.uri) for r in await client.list_all_resources()] == ["memo://readme"]
        templates = await client.list_all_resource_templates()
        assert [t.uri_template for t in templates] == ["memo://notes/{topic}"]
        read = await client.read_resource("memo://notes/tea")
        assert read.contents[0].text == "notes about tea"  # type: ignore[union-attr]
        done = await client.complete("code", "p", prompt="review")
        assert done.completion.values == ["print", "pass"]


async def test_log_level_and_log_messages_reach_the_session() -> None:
    logs: list[Any] = []
    async with Client(proxy(upstream), on_log=logs.append) as client:
        await client.call_tool("add", {"a": 1, "b": 1})
        assert logs == []  # no level asked: the upstream sends nothing
        await client.set_logging_level("info")
        await client.call_tool("add", {"a": 1, "b": 2})
    assert [entry.data for entry in logs] == ["adding 1 and 2"]


async def test_subscriptions_and_list_changed_reach_the_session() -> None:
    updated: asyncio.Queue[str] = asyncio.Queue()
    changed: asyncio.Queue[str] = asyncio.Queue()
    async with Client(
        proxy(upstream), on_resource_updated=updated.put_nowait, on_list_changed=changed.put_nowait
    ) as client:
        await client.subscribe_resource("memo://readme")
        await client.call_tool("touch", {"uri": "memo://readme"})
        assert await asyncio.wait_for(updated.get(), 10) == "memo://readme"
        await client.unsubscribe_resource("memo://readme")
        await client.call_tool("grow")
        assert await asyncio.wait_for(changed.get(), 10) == "tools"


async def test_sampling_elicitation_and_roots_are_asked_of_the_calling_client() -> None:
    asked: list[str] = []

    def sample(params: Any) -> JSONObject:
        asked.append(params.messages[0].content.text)
        return {"role": "assistant", "content": {"type": "text", "text": "42"}, "model": "m"}

    def elicit(params: Any) -> JSONObject:
        return {"action": "accept", "content": {"name": "Ada"}}

    async with Client(
        proxy(upstream), sampling=sample, elicitation=elicit, roots=["file:///work/r"]
    ) as client:
        assert text(await client.call_tool("ask_llm", {"question": "meaning?"})) == "42"
        assert text(await client.call_tool("ask_user")) == "accept:Ada"
        roots = await client.call_tool("roots")
        assert roots.structured_content == {"result": ["file:///work/r"]}
    assert asked == ["meaning?"]


async def test_an_upstream_request_the_client_did_not_declare_is_refused() -> None:
    async with Client(proxy(upstream)) as client:  # no sampling handler
        result = await client.call_tool("ask_llm", {"question": "?"})
    assert result.is_error  # the upstream was told -32601, as it would be directly


async def test_a_downstream_cancel_cancels_the_upstream_call() -> None:
    before = upstream_app.seen["cancelled"]
    started = upstream_app.seen["hanging"]
    async with Client(proxy(upstream)) as client:
        call = asyncio.ensure_future(client.call_tool("hang"))
        for _ in range(200):  # until the call runs upstream
            if upstream_app.seen["hanging"] > started:
                break
            await client.ping()
        assert not call.done()
        call.cancel()
        await asyncio.wait([call])
        for _ in range(200):  # the cancellation crosses two hops
            if upstream_app.seen["cancelled"] > before:
                break
            await client.ping()
    assert upstream_app.seen["cancelled"] == before + 1


async def test_one_upstream_session_per_downstream_session_reused_and_closed() -> None:
    server = proxy(upstream)
    async with server.running():
        assert server.upstreams.opened == 1  # the shared one
        async with Client(server) as first, Client(server) as second:
            for _ in range(3):
                await first.call_tool("add", {"a": 1, "b": 1})
                await second.call_tool("add", {"a": 1, "b": 1})
            assert server.upstreams.opened == 3  # one per session, not one per call
            sessions = len(upstream.sessions())
        for _ in range(200):  # both downstream sessions ended: their upstreams close
            if len(upstream.sessions()) == sessions - 2:
                break
            await asyncio.sleep(0.01)
        assert len(upstream.sessions()) == sessions - 2


async def test_per_request_client_through_the_proxy_to_a_handshake_upstream() -> None:
    async with Client(proxy(upstream), mode="per-request") as client:
        assert client.era == "per-request"
        assert text(await client.call_tool("add", {"a": 4, "b": 5})) == "9"
        assert upstream_app.seen["eras"][-1] == "handshake"
        prompt = await client.get_prompt("review", {"code": "y"})
        assert prompt.messages[0].content.text == "Review: y"  # type: ignore[union-attr]
        read = await client.read_resource("memo://readme")
        assert read.contents[0].text == "read me"  # type: ignore[union-attr]


async def test_handshake_client_through_the_proxy_to_a_per_request_upstream() -> None:
    def sample(params: Any) -> JSONObject:
        return {"role": "assistant", "content": {"type": "text", "text": "yes"}, "model": "m"}

    server = proxy(upstream, mode="per-request")
    async with Client(server, sampling=sample) as client:
        assert client.era == "handshake"
        assert text(await client.call_tool("add", {"a": 4, "b": 5})) == "9"
        # The upstream's input_required round is answered by this client's handler.
        assert text(await client.call_tool("ask_llm", {"question": "ok?"})) == "yes"
    assert upstream_app.seen["eras"][-1] == "per-request"


def sample_yes(params: Any) -> JSONObject:
    return {"role": "assistant", "content": {"type": "text", "text": "yes"}, "model": "m"}


def elicit_ada(params: Any) -> JSONObject:
    return {"action": "accept", "content": {"name": "Ada"}}


async def test_a_per_request_client_answers_a_handshake_upstreams_asks_in_rounds() -> None:
    server = proxy(upstream)
    async with (
        server.running(),
        Client(server, mode="per-request", sampling=sample_yes, timeout=10) as client,
    ):
        first = await client.call_tool("ask_llm", {"question": "q"}, input_required="return")
        assert isinstance(first, InputRequired)
        (asked,) = first.input_requests.values()
        assert asked["method"] == "sampling/createMessage"
        # That call still holds its upstream session (until answered, or its ttl): a new
        # call gets another, which is given back when it ends and reused by the next.
        assert text(await client.call_tool("ask_llm", {"question": "q"})) == "yes"
        opened = server.upstreams.opened
        assert text(await client.call_tool("ask_llm", {"question": "q"})) == "yes"
        assert server.upstreams.opened == opened
    async with Client(proxy(upstream), mode="per-request", elicitation=elicit_ada) as client:
        assert text(await client.call_tool("ask_user")) == "accept:Ada"


async def test_a_request_state_the_proxy_did_not_give_is_refused() -> None:
    async with Client(proxy(upstream), mode="per-request", sampling=sample_yes) as client:
        with pytest.raises(ProtocolError) as refused:
            await client.call_tool(
                "ask_llm", {"question": "q"}, input_responses={"proxy-1": {}}, request_state="x"
            )
    assert refused.value.code == -32602


async def test_per_request_rounds_pass_through_between_per_request_sides() -> None:
    server = proxy(upstream, mode="per-request")
    async with Client(server, mode="per-request", sampling=sample_yes, timeout=10) as client:
        first = await client.call_tool("ask_llm", {"question": "q"}, input_required="return")
        # The upstream's own input_required answer (its sealed state, not a proxy key).
        assert isinstance(first, InputRequired)
        assert first.request_state is not None and first.request_state not in server.bridge.pending
        assert list(first.input_requests) == ["sample-1"]
        assert text(await client.call_tool("ask_llm", {"question": "q"})) == "yes"
    assert upstream_app.seen["eras"][-1] == "per-request"


@pytest.mark.parametrize("upstream_era", ["handshake", "per-request"])
async def test_a_per_request_listener_hears_the_upstreams_list_changed(upstream_era: str) -> None:
    async with (
        Client(proxy(upstream, mode=upstream_era), mode="per-request") as client,
        client.listen(tools=True) as subscription,
    ):
        assert subscription.acknowledged == {"toolsListChanged": True}
        await client.call_tool("grow")
        note = await asyncio.wait_for(anext(aiter(subscription)), 10)
    assert note.method == "notifications/tools/list_changed"


@pytest.mark.parametrize("era", ["handshake", "per-request"])
async def test_an_upstream_that_died_is_an_error_and_is_opened_again(era: str) -> None:
    crashing = [sys.executable, str(Path(__file__).with_name("crashing_server.py"))]
    server = proxy(crashing, mode="handshake")
    async with (
        serving(server.http_app()) as base,  # stopped only once every upstream is closed
        Client(base + "/mcp", mode=era, timeout=30) as client,
    ):
        before = text(await client.call_tool("alive"))
        with pytest.raises(ProtocolError) as failed:
            await client.call_tool("crash")
        assert failed.value.code == -32603
        assert failed.value.message == (
            "the upstream server is unavailable: the connection to it closed"
        )  # the upstream's stderr (a secret, here) stays out of the client's error
        after = text(await client.call_tool("alive"))  # a new upstream process
    assert after.startswith("alive ") and after != before


async def test_a_handshake_client_subscribes_through_to_a_per_request_upstream() -> None:
    """resources/subscribe becomes a subscriptions/listen upstream, and the upstream's
    list_changed (sent only on a listen) reaches the session unasked, as a handshake-era
    server would send it."""
    updated: asyncio.Queue[str] = asyncio.Queue()
    changed: asyncio.Queue[str] = asyncio.Queue()
    server = proxy(upstream, mode="per-request")
    async with (
        server.running(),
        Client(
            server, on_resource_updated=updated.put_nowait, on_list_changed=changed.put_nowait
        ) as client,
    ):
        assert client.era == "handshake"
        await client.subscribe_resource("memo://readme")
        await client.call_tool("touch", {"uri": "memo://readme"})
        assert await asyncio.wait_for(updated.get(), 10) == "memo://readme"
        await client.unsubscribe_resource("memo://readme")
        await client.call_tool("grow")
        assert await asyncio.wait_for(changed.get(), 10) == "tools"
        await client.call_tool("touch", {"uri": "memo://readme"})
        await client.call_tool("add", {"a": 1, "b": 1})
    assert updated.empty()  # none after unsubscribing
    assert upstream_app.seen["eras"][-1] == "per-request"


def live_children() -> set[int]:
    """This process's child processes that still run (not zombies)."""
    import os

    found: set[int] = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == str(os.getpid()) and fields[0] != "Z":
            found.add(int(stat.parent.name))
    return found


@pytest.mark.parametrize("mode", ["per-request", "handshake"])
async def test_an_in_process_client_leaves_no_upstream_process_behind(mode: str) -> None:
    """Closing a client of an in-process proxy waits for the proxy to close its upstream: the
    upstream process has ended when the block ends (it outlived the block at 2026-07-28, and
    its pipes were reported unclosed in a later test)."""
    script = Path(__file__).with_name("gateway_upstream.py")
    before = live_children()
    async with Client(proxy([sys.executable, str(script)]), mode=mode, cache=False) as client:
        await client.call_tool("echo", {"text": "x"})
        upstreams = live_children() - before
        assert upstreams
    assert not live_children() & upstreams
