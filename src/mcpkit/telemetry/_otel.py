"""Spans, histograms and `_meta` propagation on the OpenTelemetry API (opentelemetry-api only).

The names and attributes are those of the semantic conventions for MCP (OpenTelemetry
semantic-conventions, docs/gen-ai/mcp.md, status Development):

- a request we send is a CLIENT span named `{mcp.method.name} {target}` (target: the tool's or
  the prompt's name, when there is one), current context as parent, and its context goes to
  the peer in the request's `params._meta` (`traceparent`, `tracestate`, `baggage`, as the
  global propagator writes them);
- a request we serve is a SERVER span of the same name whose parent is the context in
  `params._meta` (the ambient context, if any, is linked), or the ambient context when
  `_meta` carries none;
- `error.type` is the JSON-RPC error code answered (`rpc.response.status_code` too), `tool_error`
  for a tool result with `isError`, `timeout` for a request of ours that timed out, `cancelled`,
  or the exception's class name for a request of ours that failed otherwise; the span status
  is then ERROR with the error's message;
- the four histograms `mcp.{client,server}.operation.duration` and
  `mcp.{client,server}.session.duration`, in seconds, with the conventions' bucket advice.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from time import perf_counter
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import metrics, propagate, trace
from opentelemetry.trace import Link, Span, SpanKind, Status, StatusCode

from mcpkit._version import __version__
from mcpkit.errors import INTERNAL_ERROR, ProtocolError, RequestTimeout
from mcpkit.protocol import Prepared, RequestReceived

__all__ = ["BUCKETS", "Instrumentation"]

JSONObject = dict[str, Any]
Outcome = JSONObject | Prepared | Awaitable[JSONObject | Prepared]
Call = Callable[[Any, RequestReceived], Outcome]

# The bucket boundaries (seconds) the conventions advise for all four histograms.
BUCKETS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)

# What the operation histograms carry of a span's attributes (low cardinality only: no
# session id, request id or resource URI).
_METRIC_KEYS = (
    "mcp.method.name",
    "error.type",
    "gen_ai.tool.name",
    "gen_ai.prompt.name",
    "gen_ai.operation.name",
    "rpc.response.status_code",
    "mcp.protocol.version",
    "network.transport",
    "network.protocol.name",
)
_SESSION_KEYS = ("mcp.protocol.version", "network.transport", "network.protocol.name")
_RESOURCE_METHODS = frozenset({"resources/read", "resources/subscribe", "resources/unsubscribe"})


class Instrumentation:
    """mcpkit's tracer and instruments, from the global providers (see the module docstring)."""

    def __init__(self) -> None:
        self.tracer = trace.get_tracer("mcpkit", __version__)
        meter = metrics.get_meter("mcpkit", __version__)

        def histogram(name: str, description: str) -> metrics.Histogram:
            return meter.create_histogram(
                name, unit="s", description=description,
                explicit_bucket_boundaries_advisory=BUCKETS,
            )  # fmt: skip

        self.client_operation = histogram(
            "mcp.client.operation.duration",
            "The duration of the MCP request or notification as observed on the sender "
            "from the time it was sent until the response or ack is received.",
        )
        self.server_operation = histogram(
            "mcp.server.operation.duration",
            "MCP request or notification duration as observed on the receiver from the "
            "time it was received until the result or ack is sent.",
        )
        self.client_session = histogram(
            "mcp.client.session.duration", "The duration of the MCP session as observed on "
            "the MCP client.",
        )  # fmt: skip
        self.server_session = histogram(
            "mcp.server.session.duration", "The duration of the MCP session as observed on "
            "the MCP server.",
        )  # fmt: skip

    # -- requests we serve -----------------------------------------------------------------

    def serve(self, peer: Any, request: RequestReceived, call: Call) -> Outcome:
        """`call(peer, request)` inside a SERVER span (its context current while the handler
        runs, in its task too). Raises what `call` raises."""
        params = request.params or {}
        attributes = attributes_of(request.method, params, peer)
        if request.id is not None:
            attributes["jsonrpc.request.id"] = str(request.id)
        envelope = request.envelope  # a 2026-07-28 request names its revision itself
        if envelope is not None:
            attributes["mcp.protocol.version"] = envelope.version
        parent, links = _parent(params)
        span = self.tracer.start_span(
            span_name(request.method, params), parent, SpanKind.SERVER, attributes, links
        )
        ctx = trace.set_span_in_context(span, parent)
        started = perf_counter()
        token = otel_context.attach(ctx)
        try:
            outcome = call(peer, request)
        except BaseException as exc:
            self._ended(span, started, attributes, self.server_operation, _served_error(exc))
            raise
        finally:
            otel_context.detach(token)
        kind = type(outcome)
        if kind is dict or kind is Prepared:
            self._ended(span, started, attributes, self.server_operation, _result_error(outcome))
            return outcome
        return self._serve_later(span, ctx, started, attributes, outcome)  # type: ignore[arg-type]

    async def _serve_later(
        self,
        span: Span,
        ctx: otel_context.Context,
        started: float,
        attributes: JSONObject,
        pending: Awaitable[JSONObject | Prepared],
    ) -> JSONObject | Prepared:
        token = otel_context.attach(ctx)  # this runs in the handler's own task
        try:
            result = await pending
        except BaseException as exc:
            self._ended(span, started, attributes, self.server_operation, _served_error(exc))
            raise
        finally:
            otel_context.detach(token)
        self._ended(span, started, attributes, self.server_operation, _result_error(result))
        return result

    # -- requests we send ------------------------------------------------------------------

    async def request(
        self,
        peer: Any,
        method: str,
        params: JSONObject | None,
        send: Callable[..., Awaitable[JSONObject]],
        **options: Any,
    ) -> JSONObject:
        """`send(method, params, sent=..., **options)` inside a CLIENT span whose context
        rides in `params._meta`. Raises what `send` raises."""
        attributes = attributes_of(method, params or {}, peer)
        span = self.tracer.start_span(
            span_name(method, params or {}), kind=SpanKind.CLIENT, attributes=attributes
        )
        carrier: dict[str, str] = {}
        propagate.inject(carrier, trace.set_span_in_context(span))
        if carrier:
            params = with_meta(params, carrier)

        def sent(request_id: Any) -> None:
            attributes["jsonrpc.request.id"] = str(request_id)
            span.set_attribute("jsonrpc.request.id", str(request_id))

        started = perf_counter()
        try:
            result = await send(method, params, sent=sent, **options)
        except BaseException as exc:
            self._ended(span, started, attributes, self.client_operation, _sent_error(exc))
            raise
        self._ended(span, started, attributes, self.client_operation, _result_error(result))
        return result

    # -- sessions --------------------------------------------------------------------------

    def session_ended(self, peer: Any, started: float, *, server: bool) -> None:
        """Record a session's duration (`started`: perf_counter() when it began)."""
        attributes = attributes_of(None, {}, peer)
        measured = {k: attributes[k] for k in _SESSION_KEYS if k in attributes}
        histogram = self.server_session if server else self.client_session
        histogram.record(perf_counter() - started, measured)

    # -- the end of an operation -----------------------------------------------------------

    def _ended(
        self,
        span: Span,
        started: float,
        attributes: JSONObject,
        histogram: metrics.Histogram,
        error: tuple[str, str | None, str | None] | None,
    ) -> None:
        if error is not None:
            error_type, message, code = error
            attributes["error.type"] = error_type
            span.set_attribute("error.type", error_type)
            if code is not None:
                attributes["rpc.response.status_code"] = code
                span.set_attribute("rpc.response.status_code", code)
            span.set_status(Status(StatusCode.ERROR, message))
        span.end()
        measured = {k: attributes[k] for k in _METRIC_KEYS if k in attributes}
        histogram.record(perf_counter() - started, measured)


def span_name(method: str, params: JSONObject) -> str:
    """`{mcp.method.name} {target}`: the tool's or prompt's name is the target."""
    if method in ("tools/call", "prompts/get"):
        name = params.get("name")
        if type(name) is str:
            return f"{method} {name}"
    return method


def attributes_of(method: str | None, params: JSONObject, peer: Any) -> JSONObject:
    """The conventions' attributes of `method` with `params`, sent to or received from `peer`."""
    attributes: JSONObject = {}
    if method is not None:
        attributes["mcp.method.name"] = method
        name = params.get("name")
        if method == "tools/call" and type(name) is str:
            attributes["gen_ai.tool.name"] = name
            attributes["gen_ai.operation.name"] = "execute_tool"
        elif method == "prompts/get" and type(name) is str:
            attributes["gen_ai.prompt.name"] = name
        elif method in _RESOURCE_METHODS and type(params.get("uri")) is str:
            attributes["mcp.resource.uri"] = params["uri"]
    version = getattr(peer, "protocol_version", None)
    if type(version) is str:
        attributes["mcp.protocol.version"] = version
    transport = getattr(peer, "transport", None)
    session_id = getattr(transport, "session_id", None)
    if type(session_id) is str:
        attributes["mcp.session.id"] = session_id
    attributes.update(network_of(transport))
    return attributes


_NETWORK: dict[type, dict[str, str]] = {}
_PIPE = {"network.transport": "pipe"}
_HTTP = {"network.transport": "tcp", "network.protocol.name": "http"}


def network_of(transport: object) -> dict[str, str]:
    """`network.*` of a transport: stdio is a pipe, HTTP is over TCP; a request of no
    connection (sessionless, served over HTTP) is HTTP; in memory, nothing."""
    if transport is None:
        return _HTTP
    kind = type(transport)
    found = _NETWORK.get(kind)
    if found is None:
        module = kind.__module__
        if module.startswith("mcpkit.transports.stdio"):
            found = _PIPE
        elif module.startswith("mcpkit.transports.http"):
            found = _HTTP
        else:
            found = {}
        _NETWORK[kind] = found
    return found


def with_meta(params: JSONObject | None, carrier: dict[str, str]) -> JSONObject:
    """`params` with `carrier`'s keys in its `_meta` (ours win: the trace is this hop's)."""
    params = dict(params or {})
    own = params.get("_meta")
    params["_meta"] = {**own, **carrier} if isinstance(own, dict) else carrier
    return params


def _parent(params: JSONObject) -> tuple[otel_context.Context | None, list[Link] | None]:
    """The parent context from `_meta`, and a link to the ambient span when there is both."""
    meta = params.get("_meta")
    if not isinstance(meta, dict) or "traceparent" not in meta:
        return None, None
    parent = propagate.extract(meta)
    ambient = trace.get_current_span().get_span_context()
    return parent, ([Link(ambient)] if ambient.is_valid else None)


def _served_error(exc: BaseException) -> tuple[str, str | None, str | None]:
    """How the server answered a handler that raised `exc` (mcpkit.runtime.handling)."""
    if isinstance(exc, ProtocolError):
        return str(exc.code), exc.message, str(exc.code)
    if isinstance(exc, asyncio.CancelledError):
        return "cancelled", "cancelled", None
    return str(INTERNAL_ERROR), "Internal error", str(INTERNAL_ERROR)


def _sent_error(exc: BaseException) -> tuple[str, str | None, str | None]:
    if isinstance(exc, ProtocolError):
        return str(exc.code), exc.message, str(exc.code)
    if isinstance(exc, RequestTimeout):
        return "timeout", str(exc), None
    if isinstance(exc, asyncio.CancelledError):
        return "cancelled", "cancelled", None
    return type(exc).__qualname__, str(exc), None


def _result_error(result: object) -> tuple[str, str | None, str | None] | None:
    if type(result) is dict and result.get("isError") is True:
        return "tool_error", None, None
    return None
