"""The HTTP app's options: the keywords `server.http_app(...)` takes, and what each part gets.

Users write flat keywords (`http_app(max_sessions=100, allowed_hosts=["mcp.example"])`);
`HTTPAppOptions` names every one with its type, so `Server.http_app` and
`Server.run(transport="http")` are typed by it (`**options: Unpack[HTTPAppOptions]`): an
editor completes them and mypy refuses a keyword that does not exist or a value of the wrong
type. `app_config` turns them, once, into an `AppConfig` of small frozen parts, one per
concern, and each wrapper or endpoint of the app gets only its own part:

- `Limits`: the header-limit wrapper and the POST body reader;
- `Security` (security.py): the Origin/Host wrapper;
- `SessionOptions` (sessions.py): the handshake era's session registry;
- `StreamOptions`: how responses stream, in both eras;
- `HTTPSSEOptions`: the 2024-11-05 HTTP+SSE routes, when on;
- `auth`, `required_scopes`: the bearer wrapper and the scope check of a POST;
- `state` (state.py): where sessions and stream events live (in process by default);
- `HealthOptions` (health.py): the liveness and readiness probes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict

from mcpkit.transports.http.event_store import EventStore, MemoryEventStore
from mcpkit.transports.http.guard import Authenticator, RequiredScopes
from mcpkit.transports.http.health import HealthOptions
from mcpkit.transports.http.per_request import ToolHeaders
from mcpkit.transports.http.security import Security
from mcpkit.transports.http.sessions import SessionOptions
from mcpkit.transports.http.state import HTTPState, LocalState
from mcpkit.types.deprecation import warn_deprecated

ResponseMode = Literal["auto", "json", "sse"]
RESPONSE_MODES = ("auto", "json", "sse")


class HTTPAppOptions(TypedDict, total=False):
    """The keywords of `server.http_app(...)` (docs/http.md has a table of them).

    `path`: the endpoint ("/mcp"). `stateless`: no sessions; each POST served on its own.
    `response_mode`: "auto" (JSON unless the handler sends something first), "json" (related
    messages go to the GET stream) or "sse". `max_body`, `body_timeout`, `max_headers`,
    `max_header_bytes`: request limits (413, 408, 431). `max_sessions`, `idle_timeout`:
    handshake-era sessions. `event_store`: where SSE events wait for a resume (None: none).
    `retry_ms`, `keepalive`: the SSE priming event's retry and the idle comment period.
    `security`, or its fields flat (`allowed_hosts`, `allowed_origins`,
    `dns_rebinding_protection`, `trusted_proxies`, `bind_host`): Origin/Host checks.
    `http_sse`, `http_sse_path`, `http_sse_message_path`: also serve the 2024-11-05 HTTP+SSE
    transport (`legacy_sse`, `legacy_sse_path`, `legacy_message_path` until 0.1.0: still
    taken for one release, with a DeprecationWarning).
    `tool_headers`: a tool's name -> its Mcp-Param headers (the server's by default).
    `drain_timeout`: how long `app.drain()` waits for requests in flight.
    `health_path`, `ready_path`: the liveness and readiness probes ("/healthz", "/readyz";
    None: not served; health.py). `auth`: who may call (`BearerAuth`);
    `required_scopes`: the scopes each request needs (the server's by default). `state`:
    where sessions and stream events live (state.py; in this process by default, with
    `event_store`, which is then not given separately).
    """

    path: str
    stateless: bool
    response_mode: ResponseMode
    max_body: int
    body_timeout: float | None
    max_headers: int
    max_header_bytes: int
    max_sessions: int | None
    idle_timeout: float | None
    event_store: EventStore | None
    retry_ms: int
    keepalive: float | None
    security: Security
    allowed_hosts: Iterable[str] | None
    allowed_origins: Iterable[str] | None
    dns_rebinding_protection: bool | None
    trusted_proxies: Iterable[str]
    bind_host: str
    http_sse: bool
    http_sse_path: str
    http_sse_message_path: str
    legacy_sse: bool  # deprecated: http_sse
    legacy_sse_path: str  # deprecated: http_sse_path
    legacy_message_path: str  # deprecated: http_sse_message_path
    tool_headers: ToolHeaders | None
    drain_timeout: float
    health_path: str | None
    ready_path: str | None
    auth: Authenticator | None
    required_scopes: RequiredScopes | None
    state: HTTPState


class HTTPRunOptions(HTTPAppOptions, total=False):
    """`Server.run(transport="http", ...)`: uvicorn's `host`, `port`, `log_level` and
    `log_config` (its logging configuration; None: leave logging as it is configured, as
    `mcpkit run --log-format json` does) (the app's `bind_host` is `host` unless given), then
    every keyword of `http_app`."""

    host: str
    port: int
    log_level: str
    log_config: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class Limits:
    """What one request may send: `max_body` bytes (413), its body within `body_timeout` s
    (408; None: no limit), at most `max_headers` headers of `max_header_bytes` in all (431)."""

    max_body: int = 4 * 1024 * 1024
    body_timeout: float | None = 30.0
    max_headers: int = 100
    max_header_bytes: int = 64 * 1024


@dataclass(frozen=True, slots=True)
class StreamOptions:
    """How responses stream: `response_mode`, the priming event's `retry_ms`, a comment on an
    idle event stream every `keepalive` s (None: none)."""

    response_mode: ResponseMode = "auto"
    retry_ms: int = 1000
    keepalive: float | None = 15.0


@dataclass(frozen=True, slots=True)
class HTTPSSEOptions:
    """The 2024-11-05 HTTP+SSE transport: GET `sse_path` opens a session's stream, whose
    messages are POSTed to `message_path?session_id=...`."""

    sse_path: str = "/sse"
    message_path: str = "/messages/"


@dataclass(frozen=True, slots=True)
class AppConfig:
    """The whole app's configuration, by concern (see the module docstring)."""

    path: str = "/mcp"
    stateless: bool = False
    limits: Limits = field(default_factory=Limits)
    sessions: SessionOptions = field(default_factory=SessionOptions)
    streams: StreamOptions = field(default_factory=StreamOptions)
    security: Security = field(default_factory=Security)
    http_sse: HTTPSSEOptions | None = None
    auth: Authenticator | None = None
    required_scopes: RequiredScopes | None = None
    tool_headers: ToolHeaders | None = None
    drain_timeout: float = 5.0
    state: HTTPState = field(default_factory=LocalState)
    health: HealthOptions = field(default_factory=HealthOptions)


def app_config(options: HTTPAppOptions) -> AppConfig:
    """The `AppConfig` of the keywords of `http_app`.

    Raises ValueError for a value out of range (an unknown `response_mode`, `security=`
    given together with its flat fields) and TypeError for an unknown keyword (caught by
    mypy before it runs).
    """
    given: dict[str, Any] = dict(options)
    unknown = set(given) - set(HTTPAppOptions.__annotations__)
    if unknown:
        raise TypeError(f"http_app() got unexpected keyword arguments: {sorted(unknown)}")
    mode = given.get("response_mode", "auto")
    if mode not in RESPONSE_MODES:
        raise ValueError(f"response_mode must be auto, json or sse: {mode!r}")
    stateless = bool(given.get("stateless", False))
    state = given.get("state")
    if state is None:
        if "event_store" in given:  # None: no resumability
            state = LocalState(given["event_store"])
        else:
            state = LocalState(None if stateless else MemoryEventStore())
    elif "event_store" in given:
        raise ValueError("give the event store to the state, not as event_store= beside it")
    http_sse = _http_sse(given)
    return AppConfig(
        path=given.get("path", "/mcp"),
        stateless=stateless,
        limits=Limits(**_pick(given, Limits)),
        sessions=SessionOptions(**_pick(given, SessionOptions)),
        streams=StreamOptions(**_pick(given, StreamOptions)),
        security=_security(given),
        http_sse=http_sse,
        auth=given.get("auth"),
        required_scopes=given.get("required_scopes"),
        tool_headers=given.get("tool_headers"),
        drain_timeout=given.get("drain_timeout", 5.0),
        state=state,
        health=_health(given),
    )


def _health(given: dict[str, Any]) -> HealthOptions:
    """The probe paths. Raises ValueError for one that is the MCP endpoint's or not absolute."""
    health = HealthOptions(**_pick(given, HealthOptions))
    path = given.get("path", "/mcp")
    for probe in (health.health_path, health.ready_path):
        if probe is not None and (not probe.startswith("/") or probe in (path, path + "/")):
            raise ValueError(f"a probe path must start with / and not be the MCP path: {probe!r}")
    return health


def _pick(given: dict[str, Any], part: Any) -> dict[str, Any]:
    return {name: given[name] for name in part.__dataclass_fields__ if name in given}


def _security(given: dict[str, Any]) -> Security:
    """`security=`, or a `Security` of its fields given flat (lists become tuples)."""
    flat = _pick(given, Security)
    if not flat:
        return given.get("security") or Security()
    if "security" in given:
        raise ValueError("give either security=Security(...) or its fields, not both")
    for key in ("allowed_hosts", "allowed_origins", "trusted_proxies"):
        if flat.get(key) is not None:
            flat[key] = tuple(flat[key])
    return Security(**flat)


# The HTTP+SSE keywords as spelled until 0.1.0 ("legacy" also named the handshake era).
_OLD_SSE_KEYWORDS = {
    "legacy_sse": "http_sse",
    "legacy_sse_path": "http_sse_path",
    "legacy_message_path": "http_sse_message_path",
}


def _http_sse(given: dict[str, Any]) -> HTTPSSEOptions | None:
    """The HTTP+SSE routes, when `http_sse` is on. Raises ValueError for an old keyword given
    beside its new one."""
    for old, new in _OLD_SSE_KEYWORDS.items():
        if old in given:
            if new in given:
                raise ValueError(f"give {new}= only ({old}= is its deprecated spelling)")
            warn_deprecated(f"http_app({old}=...) is deprecated; use {new}=")
            given[new] = given.pop(old)
    if not given.get("http_sse", False):
        return None
    return HTTPSSEOptions(
        given.get("http_sse_path", "/sse"), given.get("http_sse_message_path", "/messages/")
    )
