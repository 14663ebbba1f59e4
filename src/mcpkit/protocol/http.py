"""Streamable HTTP decisions, as pure functions: what status, which headers, which stream.

The ASGI app in `mcpkit.transports.http` does the I/O and asks this module every question
whose answer is a rule of the specification: is this Accept header good enough, is that
protocol version one we speak, is this Host or Origin allowed, what does a body contain (one
message, a batch, requests or only notifications), what status a 2026-07-28 answer gets, how
event ids encode their stream. Nothing here reads a socket or a clock.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from mcpkit.errors import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    PARSE_ERROR,
    SERVER_ERROR,
    UNSUPPORTED_PROTOCOL_VERSION,
    ProtocolError,
)
from mcpkit.protocol.jsonrpc import (
    Invalid,
    Notification,
    Parsed,
    Request,
    RequestId,
    encode_error,
    encode_notification,
    is_valid_id,
    parse,
)
from mcpkit.protocol.lifecycle import BATCH_VERSIONS, batch_refused
from mcpkit.protocol.outgoing import Outgoing
from mcpkit.protocol.per_request import (
    PROTOCOL_VERSION,
    Envelope,
    read_envelope,
    request_meta,
    unsupported_version,
)
from mcpkit.types.versions import HANDSHAKE_VERSIONS, PER_REQUEST_VERSIONS, SUPPORTED_VERSIONS

JSON = "application/json"
SSE = "text/event-stream"
DEFAULT_VERSION = "2025-03-26"  # what a request without MCP-Protocol-Version speaks
RESUMABLE_VERSIONS = frozenset({"2025-11-25"})  # priming events and early stream close
ENDPOINT_METHODS = "GET, POST, DELETE"
STATELESS_METHODS = "POST"
PER_REQUEST_ALLOW = "POST"  # 2026-07-28: no GET stream, no sessions to DELETE


@dataclass(frozen=True, slots=True)
class Refusal:
    """An HTTP answer that ends a request before it reaches the MCP session."""

    status: int
    body: bytes
    headers: tuple[tuple[bytes, bytes], ...] = ()


def refusal(
    status: int,
    message: str,
    code: int = INVALID_REQUEST,
    headers: tuple[tuple[bytes, bytes], ...] = (),
) -> Refusal:
    """A refusal whose body is a JSON-RPC error without id."""
    return Refusal(status, encode_error(None, code, message), headers)


# -- headers ---------------------------------------------------------------------------------


def _media_types(header: str | None) -> set[str]:
    if not header:
        return set()
    return {part.split(";", 1)[0].strip().lower() for part in header.split(",")}


def accepts(header: str | None, media_type: str) -> bool:
    """Whether an Accept header lists `media_type` (or a wildcard covering it)."""
    types = _media_types(header)
    major = media_type.split("/", 1)[0]
    return media_type in types or "*/*" in types or f"{major}/*" in types


def check_post_headers(accept: str | None, content_type: str | None) -> Refusal | None:
    """POST needs Accept listing JSON and SSE (406) and a JSON body (415)."""
    if not (accepts(accept, JSON) and accepts(accept, SSE)):
        return refusal(406, f"Not Acceptable: the Accept header must list both {JSON} and {SSE}")
    if content_type is None or content_type.split(";", 1)[0].strip().lower() != JSON:
        return refusal(415, f"Unsupported Media Type: the body must be {JSON}")
    return None


def check_get_headers(accept: str | None) -> Refusal | None:
    if not accepts(accept, SSE):
        return refusal(406, f"Not Acceptable: the Accept header must list {SSE}")
    return None


def check_protocol_version(
    header: str | None, supported: tuple[str, ...] = HANDSHAKE_VERSIONS
) -> tuple[str, Refusal | None]:
    """The revision a request speaks: the header's, or 2025-03-26 when it is absent."""
    if header is None:
        return DEFAULT_VERSION, None
    version = header.strip()
    if version not in supported:
        message = (
            f"Bad Request: unsupported MCP-Protocol-Version {version!r} "
            f"(supported: {', '.join(supported)})"
        )
        return version, refusal(400, message)
    return version, None


def method_not_allowed(allow: str) -> Refusal:
    return refusal(405, "Method Not Allowed", headers=((b"allow", allow.encode()),))


def check_content_length(header: str | None, limit: int) -> Refusal | None:
    if header is None:
        return None
    try:
        length = int(header)
    except ValueError:
        return refusal(400, "Bad Request: invalid Content-Length")
    return too_large(limit) if length > limit else None


def too_large(limit: int) -> Refusal:
    return refusal(413, f"Payload Too Large: the body limit is {limit} bytes")


# -- sessions --------------------------------------------------------------------------------


def valid_session_id(value: str) -> bool:
    """Session ids are visible ASCII only (0x21-0x7E), and not empty."""
    return bool(value) and all(0x21 <= ord(c) <= 0x7E for c in value)


def session_required() -> Refusal:
    return refusal(400, "Bad Request: Mcp-Session-Id header is required")


def session_not_found() -> Refusal:
    return refusal(404, "Session not found", code=SERVER_ERROR)


# -- security --------------------------------------------------------------------------------

LOCAL_HOSTS = ("localhost", "127.0.0.1", "[::1]")


def is_loopback(host: str) -> bool:
    return host in ("localhost", "127.0.0.1", "::1", "[::1]") or host.startswith("127.")


def _split_host(value: str) -> tuple[str, str | None]:
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        host, rest = value[: end + 1], value[end + 1 :]
        return host, rest[1:] if rest.startswith(":") else None
    host, sep, port = value.rpartition(":")
    if not sep:
        return value, None
    return host, port


# RFC 9110 Host: a reg-name or IPv4 address, or an IP literal in brackets, then an optional
# numeric port. Anything else (userinfo `a@b`, spaces, a path) is not a host at all.
_HOST = re.compile(r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._~-]+)(:[0-9]{1,5})?")


def host_allowed(host: str | None, allowed: tuple[str, ...]) -> bool:
    """`allowed` entries are "name", "name:port" or "name:*" (any port). A Host header that
    is not a well-formed host is never allowed (`localhost:80@evil.example` included)."""
    if not host or _HOST.fullmatch(host.strip()) is None:
        return False
    name, port = _split_host(host)
    for entry in allowed:
        want_name, want_port = _split_host(entry)
        if want_name != name:
            continue
        if want_port is None or want_port in ("*", port):
            return True
    return False


def origin_allowed(origin: str | None, allowed: tuple[str, ...]) -> bool:
    """No Origin header is fine (not a browser); otherwise its host must be allowed.

    `allowed` entries are full origins ("https://app.example"), optionally ending in ":*",
    or the single "*" to allow any origin.
    """
    if origin is None or "*" in allowed:
        return True
    origin = origin.strip().lower()
    if origin in allowed:
        return True
    scheme, sep, rest = origin.partition("://")
    if not sep:
        return False
    name, _ = _split_host(rest)
    return f"{scheme}://{name}:*" in allowed


def local_origins() -> tuple[str, ...]:
    return tuple(f"{scheme}://{host}:*" for scheme in ("http", "https") for host in LOCAL_HOSTS)


def local_hosts() -> tuple[str, ...]:
    return tuple(f"{host}:*" for host in LOCAL_HOSTS)


def forbidden_origin() -> Refusal:
    return refusal(403, "Forbidden: Origin not allowed")


def misdirected_host() -> Refusal:
    return refusal(421, "Misdirected Request: Host not allowed")


# -- bodies ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Body:
    """What a POST body holds, parsed once: `parsed` is what the session is fed. `request` is
    the one request of a body that is not a batch, `per_request` says it carries the 2026-07-28
    envelope."""

    request_ids: tuple[RequestId, ...]
    initialize: bool
    batch: bool
    cancelled: tuple[RequestId, ...]  # ids named by notifications/cancelled
    parsed: Parsed = field(compare=False)
    request: Request | None = field(default=None, compare=False)
    per_request: bool = False


def inspect_body(data: bytes) -> Body | Refusal:
    """Parse and classify a POST body; a body that is not JSON-RPC at all is refused with 400."""
    parsed = parse(data)
    items: list[Any] = parsed if type(parsed) is list else [parsed]
    batch = type(parsed) is list
    ids: list[RequestId] = []
    cancelled: list[RequestId] = []
    initialize = False
    for item in items:
        kind = type(item)
        if kind is Invalid:
            if item.code == PARSE_ERROR or not batch:
                return Refusal(400, encode_error(item.id, item.code, item.message))
        elif kind is Request:
            ids.append(item.id)
            initialize = initialize or item.method == "initialize"
        elif kind is Notification and item.method == "notifications/cancelled":
            request_id = (item.params or {}).get("requestId")
            if is_valid_id(request_id):
                cancelled.append(request_id)
    if batch:
        return Body(tuple(ids), initialize, batch, tuple(cancelled), parsed)
    request = parsed if type(parsed) is Request else None
    per_request = request is not None and _has_envelope(request.params)
    return Body(tuple(ids), initialize, batch, tuple(cancelled), parsed, request, per_request)


def _has_envelope(params: Any) -> bool:
    meta = params.get("_meta") if type(params) is dict else None
    return type(meta) is dict and PROTOCOL_VERSION in meta


def check_batch(body: Body, version: str | None) -> Refusal | None:
    """A batch at a revision that forbids batches (all but 2025-03-26): 400 -32600 at once,
    before anything is fed to a session (no id is registered, no session is made)."""
    if body.batch and version not in BATCH_VERSIONS:
        return refusal(400, batch_refused(version))
    return None


# -- event ids -------------------------------------------------------------------------------

STANDALONE_STREAM = "0"  # the GET stream's id inside a session


def event_id(stream_id: str, sequence: int) -> str:
    """Unique per session (the sequence is), and names its stream."""
    return f"{stream_id}.{sequence}"


_EVENT_ID = re.compile(r"([0-9]{1,18})\.([0-9]{1,18})")  # ASCII digits, int-sized


def event_stream(value: str) -> str | None:
    """The stream an event id belongs to; None for an id we never minted (anything but two
    short runs of ASCII digits: a header is client input)."""
    match = _EVENT_ID.fullmatch(value)
    return None if match is None else match.group(1)


def event_sequence(value: str) -> int:
    """The sequence number of an event id `event_stream` accepts (-1 for any other)."""
    match = _EVENT_ID.fullmatch(value)
    return -1 if match is None else int(match.group(2))


# -- 2026-07-28 (the per-request era): no sessions, one message per POST ---------------------

# The HTTP status of a per-request-era error answer, by JSON-RPC code (anything else: 200).
PER_REQUEST_ERROR_STATUS = {
    METHOD_NOT_FOUND: 404,
    HEADER_MISMATCH: 400,
    MISSING_REQUIRED_CLIENT_CAPABILITY: 400,
    UNSUPPORTED_PROTOCOL_VERSION: 400,
}


def is_per_request_post(session_id: str | None, version_header: str | None, body: Body) -> bool:
    """Whether a POST is served statelessly at a per-request revision: it names no session,
    and its request carries the envelope or its MCP-Protocol-Version is a per-request one. A POST
    with a session id, or a plain initialize, stays in the handshake era."""
    if session_id is not None:
        return False
    return body.per_request or (
        version_header is not None and version_header.strip() in PER_REQUEST_VERSIONS
    )


def check_per_request_body(
    body: Body, supported: tuple[str, ...] = SUPPORTED_VERSIONS
) -> Envelope | Refusal | None:
    """A 2026-07-28 POST holds one message, and a request a well-formed envelope (400 otherwise):
    -32600 for a batch, -32602 for a missing or malformed envelope field, 404 -32601 for
    initialize (a handshake-era method). The request's `Envelope` when it is well formed at a
    version we serve; None for a notification, or a request at a version we do not serve,
    whose headers are checked first (`check_per_request_version` comes after them)."""
    if body.batch:
        message = "Invalid Request: a 2026-07-28 POST carries exactly one JSON-RPC message"
        return refusal(400, message)
    request = body.request
    if request is None:
        return None
    if request.method == "initialize":
        error = encode_error(request.id, METHOD_NOT_FOUND, "Method not found: initialize")
        return Refusal(404, error)
    meta = request_meta(request.params)
    if meta is not None:
        # The common case: a well-formed envelope at a version we serve, read once, here.
        # Anything else is worked out below, in the order errors are reported.
        try:
            return read_envelope(meta, supported)
        except ProtocolError:
            pass
    try:
        if meta is None or PROTOCOL_VERSION not in meta:
            raise ProtocolError(
                INVALID_PARAMS,
                f"Invalid params: {request.method} carries no _meta.{PROTOCOL_VERSION}; a "
                "2026-07-28 request carries its protocol version and client capabilities",
            )
        version = meta[PROTOCOL_VERSION]
        if type(version) is str and version not in supported:
            meta = {**meta, PROTOCOL_VERSION: PER_REQUEST_VERSIONS[-1]}  # its other fields
        read_envelope(meta, supported)
    except ProtocolError as exc:
        return Refusal(400, encode_error(request.id, exc.code, exc.message, exc.data))
    return None


def check_per_request_version(
    request: Request, supported: tuple[str, ...] = SUPPORTED_VERSIONS
) -> Refusal:
    """400 -32022 (listing what we support) for a request whose envelope names a version we do
    not serve per request; run after `check_per_request_body` and the header checks."""
    meta = request_meta(request.params) or {}
    error = unsupported_version(meta.get(PROTOCOL_VERSION), supported)
    return Refusal(400, encode_error(request.id, error.code, error.message, error.data))


def header_mismatch(request_id: RequestId, problem: str) -> Refusal:
    """400 with a -32020 HeaderMismatch error answering `request_id`."""
    return Refusal(400, encode_error(request_id, HEADER_MISMATCH, problem))


def per_request_status(answer: Outgoing) -> int:
    """The HTTP status of a per-request-era answer sent as JSON: 200 for a result, 404
    for -32601, 400 for that era's protocol errors."""
    code = answer.code
    return 200 if code is None else PER_REQUEST_ERROR_STATUS.get(code, 200)


def cancellation(request_id: RequestId) -> bytes:
    """The notifications/cancelled a transport feeds its session when a client goes away."""
    params = {"requestId": request_id, "reason": "the client closed the response stream"}
    return encode_notification("notifications/cancelled", params)
