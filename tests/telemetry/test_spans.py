"""mcpkit's spans and metrics on a real OpenTelemetry SDK (in-memory exporter and reader),
checked against the semantic conventions for MCP (docs/gen-ai/mcp.md): names, kinds,
attributes, parents across the client and the server, errors, both eras, both directions."""

from __future__ import annotations

from typing import Any

import pytest
from opentelemetry import baggage, trace
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind, StatusCode

from mcpkit import Client, Server, telemetry
from mcpkit.errors import ProtocolError
from mcpkit.gateway import proxy
from tests.telemetry.app import server
from tests.telemetry.conftest import Recorded

# Every attribute the conventions define for MCP spans (client and server), and no other.
CONVENTION_ATTRIBUTES = frozenset(
    {
        "mcp.method.name", "error.type", "gen_ai.prompt.name", "gen_ai.tool.name",
        "jsonrpc.request.id", "mcp.resource.uri", "rpc.response.status_code",
        "gen_ai.operation.name", "jsonrpc.protocol.version", "mcp.protocol.version",
        "mcp.session.id", "network.protocol.name", "network.protocol.version",
        "network.transport", "server.address", "server.port", "client.address", "client.port",
        "gen_ai.tool.call.arguments", "gen_ai.tool.call.result",
    }
)  # fmt: skip
ERAS = ["handshake", "per-request"]


def yes(params: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": "yes"}, "model": "m"}


def one(recorded: Recorded, name: str, kind: SpanKind) -> ReadableSpan:
    found = [span for span in recorded.named(name) if span.kind is kind]
    assert len(found) == 1, [(s.name, s.kind) for s in recorded.spans()]
    return found[0]


def check_names(span: ReadableSpan) -> None:
    assert set(span.attributes or {}) <= CONVENTION_ATTRIBUTES, span.attributes


@pytest.mark.parametrize("mode", ERAS)
async def test_one_trace_from_the_host_through_client_and_server(otel: Recorded, mode: str) -> None:
    tracer = trace.get_tracer("host")
    async with Client(server, mode=mode) as client:
        with tracer.start_as_current_span("invoke_agent weather-agent") as agent:
            result = await client.call_tool("get-weather", {"city": "Paris"})
        version = client.protocol_version
    assert not result.is_error
    sent = one(otel, "tools/call get-weather", SpanKind.CLIENT)
    served = one(otel, "tools/call get-weather", SpanKind.SERVER)
    trace_id = agent.get_span_context().trace_id
    assert sent.context.trace_id == served.context.trace_id == trace_id
    assert sent.parent is not None and sent.parent.span_id == agent.get_span_context().span_id
    assert served.parent is not None and served.parent.span_id == sent.context.span_id
    for span in (sent, served):
        check_names(span)
        attributes = span.attributes or {}
        assert attributes["mcp.method.name"] == "tools/call"
        assert attributes["gen_ai.tool.name"] == "get-weather"
        assert attributes["gen_ai.operation.name"] == "execute_tool"
        assert attributes["mcp.protocol.version"] == version
        assert span.status.status_code is StatusCode.UNSET
        assert "error.type" not in attributes
    assert sent.attributes["jsonrpc.request.id"] == served.attributes["jsonrpc.request.id"]  # type: ignore[index]


async def test_prompt_and_resource_attributes(otel: Recorded) -> None:
    async with Client(server) as client:
        await client.get_prompt("analyze-code", {"code": "x"})
        await client.read_resource("memo://readme")
    prompt = one(otel, "prompts/get analyze-code", SpanKind.SERVER)
    assert prompt.attributes["gen_ai.prompt.name"] == "analyze-code"  # type: ignore[index]
    assert "gen_ai.operation.name" not in (prompt.attributes or {})
    read = one(otel, "resources/read", SpanKind.CLIENT)  # no URI in the name (cardinality)
    assert read.attributes["mcp.resource.uri"] == "memo://readme"  # type: ignore[index]
    check_names(prompt)
    check_names(read)


@pytest.mark.parametrize("mode", ERAS)
async def test_errors_are_recorded(otel: Recorded, mode: str) -> None:
    async with Client(server, mode=mode) as client:
        failed = await client.call_tool("broken")
        assert failed.is_error
        with pytest.raises(ProtocolError):
            await client.call_tool("refuse")
    for kind in (SpanKind.CLIENT, SpanKind.SERVER):
        tool_error = one(otel, "tools/call broken", kind)
        assert tool_error.attributes["error.type"] == "tool_error"  # type: ignore[index]
        assert tool_error.status.status_code is StatusCode.ERROR
        refused = one(otel, "tools/call refuse", kind)
        assert refused.attributes["error.type"] == "-32602"  # type: ignore[index]
        assert refused.attributes["rpc.response.status_code"] == "-32602"  # type: ignore[index]
        assert refused.status.status_code is StatusCode.ERROR
        assert refused.status.description == "refused on purpose"
        check_names(refused)


async def test_the_four_histograms(otel: Recorded) -> None:
    async with Client(server) as client:
        await client.call_tool("get-weather", {"city": "Oslo"})
        await client.call_tool("broken")
    histograms = otel.histograms()
    assert {
        "mcp.client.operation.duration", "mcp.server.operation.duration",
        "mcp.client.session.duration", "mcp.server.session.duration",
    } <= set(histograms)  # fmt: skip
    served = histograms["mcp.server.operation.duration"]
    calls = [p for p in served if p.get("gen_ai.tool.name") == "get-weather"]
    assert calls and calls[0]["mcp.method.name"] == "tools/call"
    assert not {"mcp.session.id", "jsonrpc.request.id"} & set(calls[0])  # high cardinality
    assert any(p.get("error.type") == "tool_error" for p in served)


async def test_the_servers_requests_are_traced_the_other_way(otel: Recorded) -> None:
    async with Client(server, sampling=yes) as client:
        result = await client.call_tool("ask")
    assert not result.is_error
    tool = one(otel, "tools/call ask", SpanKind.SERVER)
    asked = one(otel, "sampling/createMessage", SpanKind.CLIENT)  # sent by the server
    answered = one(otel, "sampling/createMessage", SpanKind.SERVER)  # served by the client
    assert asked.parent is not None and asked.parent.span_id == tool.context.span_id
    assert answered.parent is not None and answered.parent.span_id == asked.context.span_id


async def test_context_from_the_clients_meta_is_the_servers_parent(otel: Recorded) -> None:
    traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    meta = {"traceparent": traceparent, "baggage": "userId=alice"}
    seen: list[Any] = []

    @server.tool(name="peek")
    def peek() -> str:
        seen.append(baggage.get_baggage("userId"))
        return "ok"

    try:
        async with Client(server, telemetry=False) as client:  # a client of another library
            await client.request("tools/call", {"name": "peek", "_meta": meta})
    finally:
        server.remove_tool("peek")
    served = one(otel, "tools/call peek", SpanKind.SERVER)
    assert served.context.trace_id == 0x4BF92F3577B34DA6A3CE929D0E0E4736
    assert served.parent is not None and served.parent.span_id == 0x00F067AA0BA902B7
    assert served.parent.is_remote
    assert seen == ["alice"]  # the baggage is the handler's context too
    assert not otel.named("tools/call peek") or all(
        s.kind is SpanKind.SERVER for s in otel.named("tools/call peek")
    )


async def test_one_trace_through_the_gateway(otel: Recorded) -> None:
    tracer = trace.get_tracer("host")
    async with Client(proxy(server)) as client:
        with tracer.start_as_current_span("invoke_agent") as agent:
            await client.call_tool("get-weather", {"city": "Rome"})
    spans = otel.named("tools/call get-weather")
    # host -> client -> proxy (server, then its client) -> the upstream server
    assert [s.kind for s in sorted(spans, key=lambda s: s.start_time or 0)] == [
        SpanKind.CLIENT, SpanKind.SERVER, SpanKind.CLIENT, SpanKind.SERVER,
    ]  # fmt: skip
    ordered = sorted(spans, key=lambda s: s.start_time or 0)
    parent = agent.get_span_context().span_id
    for span in ordered:
        assert span.context.trace_id == agent.get_span_context().trace_id
        assert span.parent is not None and span.parent.span_id == parent
        parent = span.context.span_id


async def test_the_off_switches(otel: Recorded, monkeypatch: pytest.MonkeyPatch) -> None:
    quiet = Server("quiet", telemetry=False)
    quiet.add_tool(lambda: "hi", name="hi")
    async with Client(quiet, telemetry=False) as client:
        await client.call_tool("hi")
    assert otel.spans() == []
    monkeypatch.setenv("MCPKIT_OTEL", "off")
    telemetry.reset()
    async with Client(server) as client:
        await client.call_tool("get-weather", {"city": "Lima"})
    assert otel.spans() == []
    assert telemetry.current() is None
    monkeypatch.delenv("MCPKIT_OTEL")
    telemetry.reset()
    assert telemetry.current() is not None
