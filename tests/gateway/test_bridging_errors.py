"""What a client of one era gets through the proxy from an upstream of the other where the
eras disagree: error codes (-32602 for a missing resource, -32021 for a missing client
capability), SEP-2243 Mcp-Param headers (checked by the proxy, sent by its upstream client),
input_required rounds (the upstream's keys, a requestState per round, answers by key), and
the upstream session era a handshake-era client gets (issue 25; the conformance gaps these
closed are in tests/gateway/test_conformance.py)."""

from __future__ import annotations

from typing import Annotated, Any

import httpx
import pytest

from mcpkit import Client, Server
from mcpkit.client import InputRequired
from mcpkit.errors import ProtocolError
from mcpkit.gateway import proxy
from mcpkit.protocol.per_request import envelope_meta
from mcpkit.server import Context, Header
from mcpkit.types import TextContent
from tests.http.servers import serving

JSONObject = dict[str, Any]
NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
COLOR = {"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]}

upstream = Server("bridged", version="1.0.0")


@upstream.tool()
def region_of(region: Annotated[str, Header("Region")]) -> str:
    """Takes its region from the Mcp-Param-Region header too (SEP-2243)."""
    return f"region={region}"


@upstream.tool()
async def needs_sampling(ctx: Context) -> str:
    """Asks the client's LLM: a client without sampling cannot be served."""
    answer = await ctx.sample("Say something", max_tokens=10)
    return str(answer.content.text)  # type: ignore[union-attr]


@upstream.tool()
async def two_rounds(ctx: Context) -> str:
    """A name (key "step1"), then a colour (key "step2")."""
    who = await ctx.elicit("Your name?", NAME, key="step1")
    color = await ctx.elicit("Your colour?", COLOR, key="step2")
    return f"{(who.data or {}).get('name')}/{(color.data or {}).get('color')}"


@upstream.tool()
async def raw_elicitation(ctx: Context) -> str:
    """Asks the client with a request of its own on the session (not `ctx.elicit`)."""
    answer = await ctx.peer.request(
        "elicitation/create",
        {"message": "Your name?", "requestedSchema": NAME},
        related_id=ctx.request_id,
    )
    return f"{answer.get('action')}:{(answer.get('content') or {}).get('name')}"


# One that also runs tasks (so the proxy declares them, and serves task-able calls apart).
tasking = Server("tasking", version="1.0.0")


@tasking.tool()
async def with_progress(ctx: Context) -> str:
    """Reports progress twice."""
    await ctx.report_progress(1, 2, "half")
    await ctx.report_progress(2, 2, "done")
    return "done"


@tasking.tool(task=True)
async def maybe_a_task() -> str:
    """Runs as a task for a client that asks: the upstream declares tasks."""
    return "ran"


@upstream.resource("memo://here")
def here() -> str:
    return "here"


def text(result: Any) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


def accepted(content: JSONObject) -> JSONObject:
    return {"action": "accept", "content": content}


def elicit_ada(params: Any) -> JSONObject:
    return accepted({"name": "Ada"})


async def test_a_missing_resource_is_invalid_params_for_a_per_request_client() -> None:
    async with Client(proxy(upstream, mode="handshake"), mode="per-request") as client:
        with pytest.raises(ProtocolError) as missing:
            await client.read_resource("memo://nowhere")
    assert missing.value.code == -32602  # the handshake-era upstream said -32002
    assert missing.value.data == {"uri": "memo://nowhere"}


async def test_a_missing_client_capability_is_32021_for_a_per_request_client() -> None:
    async with Client(proxy(upstream, mode="handshake"), mode="per-request") as client:
        with pytest.raises(ProtocolError) as refused:
            await client.call_tool("needs_sampling")
    assert refused.value.code == -32021
    assert refused.value.data == {"requiredCapabilities": {"sampling": {}}}


async def test_a_handshake_client_still_gets_the_upstreams_tool_error() -> None:
    async with Client(proxy(upstream, mode="handshake"), mode="handshake") as client:
        result = await client.call_tool("needs_sampling")
    assert result.is_error and "sampling" in text(result)


async def test_rounds_keep_the_upstreams_keys_and_each_has_its_own_request_state() -> None:
    server = proxy(upstream, mode="handshake")
    async with server.running(), Client(server, mode="per-request", elicitation=elicit_ada) as c:
        first = await c.call_tool("two_rounds", input_required="return")
        assert isinstance(first, InputRequired)
        assert list(first.input_requests) == ["step1"]
        assert "_meta" not in first.input_requests["step1"].get("params", {})
        second = await c.call_tool(
            "two_rounds",
            input_required="return",
            input_responses={"step1": accepted({"name": "Ada"})},
            request_state=first.request_state,
        )
        assert isinstance(second, InputRequired)
        assert list(second.input_requests) == ["step2"]
        assert second.request_state != first.request_state
        with pytest.raises(ProtocolError) as replayed:  # the first round's state is spent
            await c.call_tool(
                "two_rounds",
                input_required="return",
                input_responses={"step2": accepted({"color": "red"})},
                request_state=first.request_state,
            )
        assert replayed.value.code == -32602
        done = await c.call_tool(
            "two_rounds",
            input_responses={"step2": accepted({"color": "blue"})},
            request_state=second.request_state,
        )
        assert text(done) == "Ada/blue"


async def test_answers_sent_with_a_first_round_are_used_by_key() -> None:
    server = proxy(upstream, mode="handshake")
    async with server.running(), Client(server, mode="per-request", elicitation=elicit_ada) as c:
        given = {
            "step1": accepted({"name": "Bo"}),
            "step2": accepted({"color": "green"}),
            "unknown": accepted({"x": 1}),  # ignored
        }
        done = await c.call_tool("two_rounds", input_responses=given, input_required="return")
        assert not isinstance(done, InputRequired)
        assert text(done) == "Bo/green"
        wrong = await c.call_tool(
            "two_rounds", input_responses={"wrong": accepted({})}, input_required="return"
        )
        assert isinstance(wrong, InputRequired)  # asked again, not an error
        assert list(wrong.input_requests) == ["step1"]


def per_request_post(region_header: str, region: str) -> tuple[JSONObject, JSONObject]:
    """A 2026-07-28 tools/call of region_of over HTTP: its headers and body."""
    meta = envelope_meta("2026-07-28", {}, {"name": "raw", "version": "1"})
    params = {"name": "region_of", "arguments": {"region": region}, "_meta": meta}
    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": "region_of",
        "Mcp-Param-Region": region_header,
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    return headers, body


@pytest.mark.parametrize("upstream_era", ["handshake", "per-request"])
async def test_the_proxy_checks_mcp_param_headers_as_a_per_request_server(
    upstream_era: str,
) -> None:
    async with (
        serving(upstream.http_app()) as upstream_base,
        serving(proxy(upstream_base + "/mcp", mode=upstream_era).http_app()) as base,
        httpx.AsyncClient(timeout=30) as http,
    ):
        for sent, status in [("Hello", 200), ("=?base64?SGVsbG8=?=", 200), ("Bye", 400)]:
            headers, body = per_request_post(sent, "Hello")
            answer = await http.post(base + "/mcp", json=body, headers=headers)
            assert answer.status_code == status, (sent, answer.text)
            if status == 400:
                assert answer.json()["error"]["code"] == -32020
        headers, body = per_request_post("=?base64?SGVsbG8=?=", "=?base64?SGVsbG8=?=")
        literal = await http.post(base + "/mcp", json=body, headers=headers)
        assert literal.status_code == 400  # the header decodes to Hello: not the argument


async def test_the_proxys_upstream_client_sends_mcp_param_headers() -> None:
    async with (
        serving(upstream.http_app()) as upstream_base,
        Client(proxy(upstream_base + "/mcp"), mode="per-request") as client,
    ):
        for region in ("Hello", "SGVsbG8=", "=?base64?SGVsbG8=", "Zürich"):
            assert text(await client.call_tool("region_of", {"region": region})) == (
                f"region={region}"
            )


async def test_a_handshake_session_gets_a_handshake_upstream_session() -> None:
    """mode auto, an upstream that speaks both eras: the upstream's own request on the
    session (outside any input_required round) reaches the handshake-era client."""
    async with (
        serving(upstream.http_app()) as upstream_base,
        Client(proxy(upstream_base + "/mcp"), mode="handshake", elicitation=elicit_ada) as c,
    ):
        assert text(await c.call_tool("raw_elicitation")) == "accept:Ada"
    async with (
        serving(upstream.http_app()) as upstream_base,
        Client(proxy(upstream_base + "/mcp"), mode="per-request") as c,
    ):
        assert c.era == "per-request"
        assert text(await c.call_tool("region_of", {"region": "x"})) == "region=x"


async def test_a_handshake_session_of_a_tasks_upstream_keeps_its_progress() -> None:
    """The same session era in front of an upstream that runs tasks: a plain call goes on
    the session's own handshake-era upstream, progress and all (not as a task)."""
    progress: list[tuple[float, float | None, str | None]] = []
    async with (
        serving(tasking.http_app()) as upstream_base,
        Client(proxy(upstream_base + "/mcp"), mode="handshake") as c,
    ):
        done = await c.call_tool("with_progress", on_progress=lambda *p: progress.append(p))
    assert text(done) == "done"
    assert progress == [(1, 2, "half"), (2, 2, "done")]


async def test_the_server_names_its_asks_and_missing_capabilities_for_a_bridge() -> None:
    """What an mcpkit upstream tells a bridge in the handshake era (server side): an ask's
    own key in its request's `_meta`, and the capability a tool error is for."""
    asked: list[JSONObject] = []

    def elicit(params: Any) -> JSONObject:
        asked.append(params.to_wire())
        wanted = next(iter(params.to_wire()["requestedSchema"]["properties"]))
        return accepted({wanted: "Ada" if wanted == "name" else "red"})

    async with Client(upstream, mode="handshake", elicitation=elicit) as client:
        assert text(await client.call_tool("two_rounds")) == "Ada/red"
        refused = await client.request("tools/call", {"name": "needs_sampling"})
    assert [ask["_meta"] for ask in asked] == [
        {"mcpkit/inputKey": "step1"},
        {"mcpkit/inputKey": "step2"},
    ]
    assert refused["isError"] is True
    assert refused["_meta"] == {"mcpkit/missingCapability": {"sampling": {}}}
