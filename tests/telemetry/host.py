"""A Host's agent in a process of its own: the SDK with a batch span processor exporting over
OTLP/HTTP (OTEL_EXPORTER_OTLP_ENDPOINT), an `invoke_agent` span, and one tool call through an
mcpkit client to TARGET (`stdio`: tests/telemetry/app.py as a subprocess; else a URL), in the
era MODE (the client's `mode`, default auto)."""

from __future__ import annotations

import asyncio
import sys

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from mcpkit import Client


async def main(target: str, mode: str) -> None:
    provider = TracerProvider(resource=Resource.create({"service.name": "host"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    server = [sys.executable, "-m", "tests.telemetry.app"] if target == "stdio" else target
    async with Client(server, mode=mode) as client:
        with trace.get_tracer("host").start_as_current_span("invoke_agent weather-agent"):
            result = await client.call_tool("get-weather", {"city": "Paris"})
            failed = await client.call_tool("broken")
    assert not result.is_error and failed.is_error
    provider.shutdown()  # exports what the batch holds


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "auto"))
