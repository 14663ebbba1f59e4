"""An OTLP/HTTP receiver on 127.0.0.1 for the tests: it decodes what the exporters POST to
/v1/traces and /v1/metrics with opentelemetry-proto and keeps the spans and metric names."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest


@dataclass
class Span:
    service: str
    name: str
    kind: int  # opentelemetry.proto Span.SpanKind: 2 SERVER, 3 CLIENT
    trace_id: bytes
    span_id: bytes
    parent_span_id: bytes
    attributes: dict[str, Any]
    status_code: int  # 2: ERROR


@dataclass
class Received:
    spans: list[Span] = field(default_factory=list)
    metrics: set[tuple[str, str]] = field(default_factory=set)  # (service, metric name)
    changed: threading.Condition = field(default_factory=threading.Condition)

    def wait_for(self, ready: Callable[[Received], bool], seconds: float = 30.0) -> None:
        """Block until `ready(self)` (what the exporters send arrives on their threads)."""
        with self.changed:
            assert self.changed.wait_for(lambda: ready(self), seconds), self.spans


def _value(any_value: Any) -> Any:
    kind = any_value.WhichOneof("value")
    return getattr(any_value, kind) if kind else None


def _service(resource: Any) -> str:
    for attribute in resource.attributes:
        if attribute.key == "service.name":
            return str(_value(attribute.value))
    return ""


def _decode(path: str, body: bytes, received: Received) -> None:
    if path == "/v1/traces":
        request = ExportTraceServiceRequest.FromString(body)
        for resource_spans in request.resource_spans:
            service = _service(resource_spans.resource)
            for scope in resource_spans.scope_spans:
                for span in scope.spans:
                    attributes = {a.key: _value(a.value) for a in span.attributes}
                    received.spans.append(
                        Span(service, span.name, span.kind, span.trace_id, span.span_id,
                             span.parent_span_id, attributes, span.status.code)
                    )  # fmt: skip
    elif path == "/v1/metrics":
        metrics_request = ExportMetricsServiceRequest.FromString(body)
        for resource_metrics in metrics_request.resource_metrics:
            service = _service(resource_metrics.resource)
            for scope_metrics in resource_metrics.scope_metrics:
                for metric in scope_metrics.metrics:
                    received.metrics.add((service, metric.name))


@contextmanager
def otlp_receiver() -> Iterator[tuple[str, Received]]:
    """A receiver listening on 127.0.0.1 (an unused port); yields its URL and what arrives."""
    received = Received()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            with received.changed:
                _decode(self.path, body, received)
                received.changed.notify_all()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", received
    finally:
        httpd.shutdown()
        httpd.server_close()
