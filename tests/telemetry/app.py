"""The server the telemetry tests call, in this process or as a subprocess (stdio or HTTP),
optionally exporting its spans over OTLP/HTTP (the endpoint in OTEL_EXPORTER_OTLP_ENDPOINT)."""

from __future__ import annotations

import os
import sys

from mcpkit import Context, Server
from mcpkit.errors import ProtocolError

server = Server("weather", version="1.0.0")


@server.tool(name="get-weather")
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


@server.tool()
def broken() -> str:
    """Fails with a tool error."""
    raise ValueError("no forecast today")


@server.tool()
def refuse() -> str:
    """Fails with a protocol error."""
    raise ProtocolError(-32602, "refused on purpose")


@server.tool()
async def ask(ctx: Context) -> str:
    """Asks the client's model (a request in the other direction)."""
    answer = await ctx.sample("Say yes", max_tokens=5)
    return str(answer.content.text)  # type: ignore[union-attr]


@server.prompt(name="analyze-code")
def analyze(code: str) -> str:
    return f"Analyze {code}"


@server.resource("memo://readme")
def readme() -> str:
    return "read me"


def export_over_otlp() -> None:
    """The SDK with an OTLP/HTTP exporter (spans and metrics), as a deployed server has."""
    from opentelemetry import metrics, trace
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    resource = Resource.create({"service.name": os.environ.get("OTEL_SERVICE_NAME", "server")})
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    reader = PeriodicExportingMetricReader(OTLPMetricExporter(), export_interval_millis=3_600_000)
    metrics.set_meter_provider(MeterProvider(resource=resource, metric_readers=[reader]))


if __name__ == "__main__":
    if os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        export_over_otlp()
    if len(sys.argv) > 1:
        server.run(transport="http", host="127.0.0.1", port=int(sys.argv[1]))
    else:
        server.run()
