"""One real OpenTelemetry SDK for this process: the global tracer and meter providers, with an
in-memory span exporter and an in-memory metric reader (the providers can be set only once
per process, so every test here shares them and starts from an empty exporter)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from mcpkit import telemetry


@dataclass
class Recorded:
    exporter: InMemorySpanExporter
    reader: InMemoryMetricReader

    def spans(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def named(self, name: str) -> list[ReadableSpan]:
        return [span for span in self.spans() if span.name == name]

    def histograms(self) -> dict[str, list[dict[str, object]]]:
        """Each histogram's data points' attributes (and count), by metric name."""
        found: dict[str, list[dict[str, object]]] = {}
        data = self.reader.get_metrics_data()
        if data is None:
            return found
        for resource in data.resource_metrics:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    assert metric.unit == "s"
                    points = found.setdefault(metric.name, [])
                    for point in metric.data.data_points:
                        points.append({**dict(point.attributes or {}), "count": point.count})  # type: ignore[union-attr]
        return found


_SDK: list[Recorded] = []  # made once per process


def _sdk() -> Recorded:
    if not _SDK:
        exporter = InMemorySpanExporter()
        tracer_provider = TracerProvider()
        tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
        trace.set_tracer_provider(tracer_provider)
        reader = InMemoryMetricReader()
        metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
        _SDK.append(Recorded(exporter, reader))
    return _SDK[0]


@pytest.fixture
def otel() -> Iterator[Recorded]:
    recorded = _sdk()
    recorded.exporter.clear()
    telemetry.reset()
    yield recorded
    recorded.exporter.clear()
    # The providers stay set for this process: the tests that run after these ones (another
    # folder) record nothing, as when MCPKIT_OTEL=off.
    before = os.environ.get("MCPKIT_OTEL")
    os.environ["MCPKIT_OTEL"] = "off"
    telemetry.reset()
    if before is None:
        del os.environ["MCPKIT_OTEL"]
    else:
        os.environ["MCPKIT_OTEL"] = before
