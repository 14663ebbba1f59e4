"""One trace across processes, exported over OTLP/HTTP to a receiver this test starts on
127.0.0.1, decoded with opentelemetry-proto: a Host's agent -> its mcpkit client -> an mcpkit
server over stdio (a subprocess) and over Streamable HTTP (uvicorn in a subprocess), each
process exporting with the real SDK. Nothing here configures mcpkit: the processes set up the
SDK and mcpkit's spans and metrics follow."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.http.servers import unused_port, wait_until_listening
from tests.telemetry.receiver import Received, Span, otlp_receiver

ROOT = Path(__file__).resolve().parents[2]
SERVER, CLIENT = 2, 3  # opentelemetry.proto Span.SpanKind
pytestmark = pytest.mark.slow


def environment(endpoint: str, service: str) -> dict[str, str]:
    return {
        **os.environ, "PYTHONPATH": str(ROOT), "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
        "OTEL_SERVICE_NAME": service, "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
    }  # fmt: skip


def run_host(target: str, endpoint: str, mode: str = "auto") -> None:
    # The stdio server is the host's child: it inherits the endpoint and exports as "server".
    env = environment(endpoint, "server")
    done = subprocess.run(
        [sys.executable, "-m", "tests.telemetry.host", target, mode],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


def one(spans: list[Span], service: str, name: str, kind: int) -> Span:
    found = [s for s in spans if s.service == service and s.name == name and s.kind == kind]
    assert len(found) == 1, [(s.service, s.name, s.kind) for s in spans]
    return found[0]


def check_the_trace(received: Received, transport: str) -> None:
    spans = received.spans
    agent = one(spans, "host", "invoke_agent weather-agent", 1)  # INTERNAL
    sent = one(spans, "host", "tools/call get-weather", CLIENT)
    served = one(spans, "server", "tools/call get-weather", SERVER)
    assert sent.trace_id == served.trace_id == agent.trace_id
    assert sent.parent_span_id == agent.span_id
    assert served.parent_span_id == sent.span_id
    for span in (sent, served):
        assert span.attributes["mcp.method.name"] == "tools/call"
        assert span.attributes["gen_ai.tool.name"] == "get-weather"
        assert span.attributes["network.transport"] == transport
        assert "mcp.protocol.version" in span.attributes
        assert "jsonrpc.request.id" in span.attributes
    failed = one(spans, "server", "tools/call broken", SERVER)
    assert failed.attributes["error.type"] == "tool_error"
    assert failed.status_code == 2  # STATUS_CODE_ERROR
    assert failed.trace_id == agent.trace_id


def arrived(received: Received) -> bool:
    services = {(s.service, s.name) for s in received.spans}
    return {("host", "invoke_agent weather-agent"), ("server", "tools/call broken")} <= services


def test_one_trace_over_stdio() -> None:
    with otlp_receiver() as (endpoint, received):
        run_host("stdio", endpoint)
        # The server exports as it serves; its metrics when it exits (stdin closed).
        ended = ("server", "mcp.server.session.duration")
        received.wait_for(lambda r: arrived(r) and ended in r.metrics)
        check_the_trace(received, "pipe")
        assert {
            ("server", "mcp.server.operation.duration"), ("server", "mcp.server.session.duration"),
        } <= received.metrics  # fmt: skip


@pytest.fixture(params=["handshake", "per-request"])
def http_server(request: pytest.FixtureRequest) -> Iterator[tuple[str, Received]]:
    with otlp_receiver() as (endpoint, received):
        port = unused_port()
        server = subprocess.Popen(
            [sys.executable, "-m", "tests.telemetry.app", str(port)],
            cwd=ROOT, env=environment(endpoint, "server"),
        )  # fmt: skip
        url = f"http://127.0.0.1:{port}/mcp"
        try:
            wait_until_listening(url, seconds=30)
            run_host(url, endpoint, request.param)
            yield request.param, received
        finally:
            server.terminate()
            server.wait(30)


def test_one_trace_over_http(http_server: tuple[str, Received]) -> None:
    era, received = http_server
    received.wait_for(arrived)
    check_the_trace(received, "tcp")
    served = one(received.spans, "server", "tools/call get-weather", SERVER)
    sent = one(received.spans, "host", "tools/call get-weather", CLIENT)
    assert served.attributes["network.protocol.name"] == "http"
    if era == "handshake":  # an HTTP session: both sides name it
        assert served.attributes["mcp.session.id"] == sent.attributes["mcp.session.id"]
    else:
        assert served.attributes["mcp.protocol.version"] == "2026-07-28"
