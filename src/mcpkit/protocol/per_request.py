"""The per-request era (revision 2026-07-28 on): no handshake, every request carries its
envelope.

A per-request-era request names its protocol version and the client's capabilities in
`params._meta`; the server checks them per request and stamps every result with
`resultType` and its own identity. These are the pure rules; the connection applies them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, NamedTuple

import orjson

from mcpkit.errors import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    UNSUPPORTED_PROTOCOL_VERSION,
    ProtocolError,
)
from mcpkit.protocol.jsonrpc import Prepared
from mcpkit.types.versions import PER_REQUEST_VERSIONS

JSONObject = dict[str, Any]

PROTOCOL_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
CLIENT_INFO: Final = "io.modelcontextprotocol/clientInfo"
CLIENT_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"
LOG_LEVEL: Final = "io.modelcontextprotocol/logLevel"
SERVER_INFO: Final = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_ID: Final = "io.modelcontextprotocol/subscriptionId"
TRACE_KEYS: Final = ("traceparent", "tracestate", "baggage")

# Errors only a per-request server sends: a client seeing one knows the server's era.
PER_REQUEST_ERROR_CODES: Final = frozenset(
    {HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION}
)
# Results that carry ttlMs/cacheScope (server/utilities/caching).
CACHEABLE_METHODS: Final = frozenset(
    {
        "server/discover",
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "resources/read",
    }
)
# Requests a server may answer with resultType "input_required" (patterns/mrtr).
INPUT_REQUIRED_METHODS: Final = frozenset({"tools/call", "prompts/get", "resources/read"})
LOG_LEVELS: Final = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)


@dataclass(frozen=True, slots=True)
class CacheHint:
    """How long (ms) and for whom ("public"/"private") a result may be cached."""

    ttl_ms: int
    scope: str = "public"

    def __post_init__(self) -> None:
        if self.ttl_ms < 0 or self.scope not in ("public", "private"):
            raise ValueError(f"ttl_ms must be >= 0 and scope public or private: {self}")


DEFAULT_CACHE_HINTS: Final = {
    "server/discover": CacheHint(60_000),
    "tools/list": CacheHint(60_000),
    "prompts/list": CacheHint(60_000),
    "resources/list": CacheHint(60_000),
    "resources/templates/list": CacheHint(60_000),
    # Resource contents change and may depend on who asks: fresh every time, never shared.
    "resources/read": CacheHint(0, "private"),
}


class Envelope(NamedTuple):
    """What a per-request-era request says about itself (immutable; a named tuple because one is
    built for every such request, at a third of a frozen dataclass's cost)."""

    version: str
    capabilities: JSONObject
    client_info: JSONObject | None = None
    log_level: str | None = None
    trace: JSONObject | None = None  # traceparent / tracestate / baggage, when present


def request_meta(params: JSONObject | None) -> JSONObject | None:
    """`params._meta` when it is an object."""
    if params is None:
        return None
    meta = params.get("_meta")
    return meta if type(meta) is dict else None


def is_per_request(params: JSONObject | None) -> bool:
    meta = request_meta(params)
    return meta is not None and PROTOCOL_VERSION in meta


def read_envelope(meta: JSONObject, supported: tuple[str, ...]) -> Envelope:
    """The envelope of a request in this era. `supported` lists every version we speak (both eras).

    Raises ProtocolError: -32602 for a missing or malformed field, -32022 for a version we
    do not serve per request.
    """
    version = meta.get(PROTOCOL_VERSION)
    if type(version) is not str:
        raise ProtocolError(
            INVALID_PARAMS, f"Invalid params: _meta.{PROTOCOL_VERSION} must be a string"
        )
    if version not in PER_REQUEST_VERSIONS or version not in supported:
        raise unsupported_version(version, supported)
    capabilities = meta.get(CLIENT_CAPABILITIES)
    if type(capabilities) is not dict:
        raise ProtocolError(
            INVALID_PARAMS,
            f"Invalid params: _meta.{CLIENT_CAPABILITIES} is required on every request "
            "(an object; {} declares none)",
        )
    client_info = meta.get(CLIENT_INFO)
    if client_info is not None and type(client_info) is not dict:
        raise ProtocolError(
            INVALID_PARAMS, f"Invalid params: _meta.{CLIENT_INFO} must be an object"
        )
    level = meta.get(LOG_LEVEL)
    if level is not None and level not in LOG_LEVELS:
        raise ProtocolError(
            INVALID_PARAMS,
            f"Invalid params: _meta.{LOG_LEVEL} must be one of {', '.join(LOG_LEVELS)}",
        )
    trace = None
    for key in TRACE_KEYS:
        value = meta.get(key)
        if type(value) is str:
            trace = trace or {}
            trace[key] = value
    return Envelope(version, capabilities, client_info, level, trace)


def unsupported_version(requested: Any, supported: tuple[str, ...]) -> ProtocolError:
    return ProtocolError(
        UNSUPPORTED_PROTOCOL_VERSION,
        "Unsupported protocol version",
        {"supported": list(reversed(supported)), "requested": requested},
    )


def missing_capability(required: JSONObject) -> ProtocolError:
    """-32021: handling the request needs client capabilities the request did not declare."""
    names = ", ".join(required)
    return ProtocolError(
        MISSING_REQUIRED_CLIENT_CAPABILITY,
        f"Missing required client capability: {names}",
        {"requiredCapabilities": required},
    )


def envelope_meta(
    version: str, capabilities: JSONObject, client_info: JSONObject | None
) -> JSONObject:
    """The `_meta` a per-request-era client puts on every request. The capabilities are shaped as
    2026-07-28 defines them: `roots` has no `listChanged` there (a client sends no
    notifications; its roots are asked for in each input_required round)."""
    roots = capabilities.get("roots")
    if type(roots) is dict and "listChanged" in roots:
        roots = {k: v for k, v in roots.items() if k != "listChanged"}
        capabilities = {**capabilities, "roots": roots}
    meta: JSONObject = {PROTOCOL_VERSION: version, CLIENT_CAPABILITIES: capabilities}
    if client_info is not None:
        meta[CLIENT_INFO] = client_info
    return meta


def stamp(params: JSONObject | None, meta: JSONObject) -> JSONObject:
    """`params` with the envelope merged into its `_meta` (the caller's keys win)."""
    if not params:
        return {"_meta": meta}
    own = params.get("_meta")
    return {**params, "_meta": {**meta, **own} if type(own) is dict else meta}


class ResultStamp:
    """Adds `resultType`, the server's identity and cache hints to a server's results in this era.

    Built once per server configuration; the per-method prefixes for pre-serialized results
    are computed once, so a cached page costs a byte splice, not a re-encode.
    """

    __slots__ = ("_hints", "_meta", "_prefixes")

    def __init__(self, server_info: JSONObject | None, hints: dict[str, CacheHint]) -> None:
        self._meta = {SERVER_INFO: server_info} if server_info else None
        self._hints = hints
        self._prefixes: dict[tuple[str, bool], bytes] = {}

    def result(self, method: str, result: JSONObject) -> JSONObject:
        out = dict(result)
        kind = out.setdefault("resultType", "complete")
        if kind == "complete":
            hint = self._hints.get(method)
            if hint is not None:
                out.setdefault("ttlMs", hint.ttl_ms)
                out.setdefault("cacheScope", hint.scope)
        if self._meta is not None:
            own = out.get("_meta")
            out["_meta"] = {**self._meta, **own} if type(own) is dict else self._meta
        return out

    def prepared(self, method: str, prepared: Prepared) -> Prepared:
        body = prepared.json
        if b'"resultType"' in body or b'"_meta"' in body:
            return Prepared(self.result(method, orjson.loads(body)))
        key = (method, body == b"{}")
        prefix = self._prefixes.get(key)
        if prefix is None:
            fields = self.result(method, {})
            prefix = orjson.dumps(fields)[:-1] + (b"" if key[1] else b",")
            self._prefixes[key] = prefix
        return _spliced(prefix + body[1:])

    def hint(self, method: str) -> CacheHint | None:
        return self._hints.get(method)


def _spliced(data: bytes) -> Prepared:
    out = Prepared.__new__(Prepared)
    out.json = data
    return out


def discover_result(
    supported: tuple[str, ...], capabilities: JSONObject, instructions: str | None
) -> JSONObject:
    """The `server/discover` answer, newest version first (before stamping)."""
    result: JSONObject = {
        "supportedVersions": list(reversed(supported)),
        "capabilities": capabilities,
    }
    if instructions is not None:
        result["instructions"] = instructions
    return result
