"""The sans-IO MCP connection: one object for both roles, no I/O, no clock.

Feed it what arrived (`receive(data, now)`), the passage of time (`expire(now)`) and what you
want to say (`send_request`, `send_result`, `send_notification`, `cancel`, ...). It answers
with events and queues outgoing messages; take them with `data_to_send()` and frame them as
your transport does (a line on stdio, a body or an SSE event over HTTP). Each queued message
carries the id of the request it relates to, so an HTTP transport can route it to that
request's stream.

Guarantees: every request the peer sends gets exactly one answer unless the peer cancels it;
malformed input becomes an error answer (or is dropped where none is owed) and never disturbs
other requests in flight; a request we send ends in exactly one of response, error, timeout,
cancellation or connection loss.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from mcpkit.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    CapabilityNotDeclared,
    ConnectionClosed,
    LocalProtocolViolation,
    ProtocolError,
    RequestTimeout,
    UnsupportedProtocolVersion,
)
from mcpkit.protocol.deadlines import Deadline, DeadlineQueue, Timeout
from mcpkit.protocol.events import (
    ErrorReceived,
    Event,
    Initialized,
    InitializeFailed,
    MessageRejected,
    NotificationReceived,
    ProgressReceived,
    RequestCancelled,
    RequestReceived,
    RequestTimedOut,
    ResponseReceived,
)
from mcpkit.protocol.jsonrpc import (
    ErrorResponse,
    Invalid,
    Message,
    Notification,
    Prepared,
    Request,
    RequestId,
    Response,
    encode_error,
    encode_notification,
    encode_request,
    encode_result,
    is_valid_id,
    parse,
)
from mcpkit.protocol.lifecycle import (
    BATCH_VERSIONS,
    Role,
    check_initialize_params,
    check_initialize_result,
    has_capability,
    inbound_requests,
    initialize_params,
    negotiate_version,
    outbound_methods,
)
from mcpkit.protocol.modern import (
    DEFAULT_CACHE_HINTS,
    CacheHint,
    Envelope,
    ResultStamp,
    discover_result,
    envelope_meta,
    read_envelope,
    request_meta,
    stamp,
)
from mcpkit.protocol.modern import PROTOCOL_VERSION as _ENVELOPE_KEY
from mcpkit.types.methods import METHODS, MethodInfo
from mcpkit.types.versions import HANDSHAKE_VERSIONS, MODERN_VERSIONS

JSONObject = dict[str, Any]
Outgoing = tuple[bytes, RequestId | None]

# Notifications the connection sends itself, through dedicated calls.
_RESERVED_NOTIFICATIONS = frozenset(
    {"notifications/cancelled", "notifications/progress", "notifications/initialized"}
)


class State(Enum):
    NEW = "new"  # nothing exchanged yet
    INITIALIZING = "initializing"  # client: initialize sent; server: answered, awaiting initialized
    READY = "ready"
    CLOSED = "closed"


@dataclass(frozen=True, slots=True)
class ConnectionConfig:
    """Who we are. `versions` are the handshake revisions we speak, oldest first (a client
    offers the last); `modern` the per-request revisions (2026-07-28 on). A server stamps
    modern results with `cache_hints` (None: the defaults) and, with `announce`, its info."""

    role: Role
    info: JSONObject
    capabilities: JSONObject = field(default_factory=dict)
    instructions: str | None = None
    versions: tuple[str, ...] = HANDSHAKE_VERSIONS
    modern: tuple[str, ...] = MODERN_VERSIONS
    cache_hints: dict[str, CacheHint] | None = None
    announce: bool = True

    @property
    def all_versions(self) -> tuple[str, ...]:
        return self.versions + self.modern


class _Batch:
    """Answers to a 2025-03-26 batch, sent together once every request in it is answered."""

    __slots__ = ("related", "replies", "sealed", "waiting")

    def __init__(self, related: RequestId | None) -> None:
        self.related = related  # the first request's id: HTTP routes the answer by it
        self.waiting: set[RequestId] = set()
        self.replies: list[bytes] = []
        self.sealed = False


class _Inbound:
    __slots__ = ("batch", "envelope", "last_progress", "method", "progress_token")

    def __init__(
        self,
        method: str,
        progress_token: str | int | None,
        batch: _Batch | None,
        envelope: Envelope | None = None,
    ) -> None:
        self.method = method
        self.progress_token = progress_token
        self.batch = batch
        self.envelope = envelope  # a modern request: its answer is stamped
        self.last_progress: float | None = None


class _Outbound:
    __slots__ = ("last_progress", "method", "progress_token")

    def __init__(self, method: str, progress_token: RequestId | None) -> None:
        self.method = method
        self.progress_token = progress_token
        self.last_progress: float | None = None


class Connection:
    """One side of an MCP conversation (client or server), as a pure state machine."""

    def __init__(self, config: ConnectionConfig) -> None:
        self.config = config
        self.role: Role = config.role
        self.state = State.NEW
        self.protocol_version: str | None = None
        self.peer_info: JSONObject | None = None
        self.peer_capabilities: JSONObject | None = None
        self.instructions: str | None = None  # the server's, as seen by a client
        self._outbox: list[Outgoing] = []
        self._inbound: dict[RequestId, _Inbound] = {}
        self._outbound: dict[RequestId, _Outbound] = {}
        self._progress_tokens: dict[RequestId, RequestId] = {}
        self._deadlines: dict[RequestId, Deadline] = {}
        self._deadline_queue = DeadlineQueue()
        self._next_id = 1
        self._initialize_id: RequestId | None = None
        self._accepted: dict[str, MethodInfo] = {}
        self._allowed_requests: set[str] = set()
        self._stamp: ResultStamp | None = None  # server: built on the first modern request
        # server: (version, method) -> what serves it per request (None: method not found)
        self._modern_methods: dict[tuple[str, str], MethodInfo | None] = {}
        self._all_versions = config.all_versions  # both eras, oldest first
        self._envelope: JSONObject | None = None  # client in modern mode: stamped on requests

    @property
    def modern(self) -> bool:
        """Client: speaking a per-request revision (no handshake)."""
        return self._envelope is not None

    @property
    def next_request_id(self) -> RequestId:
        """The id `send_request` gives the next request. A client that must route messages
        naming a request before its answer (a subscription's notifications carry its id)
        reads it just before sending."""
        return self._next_id

    # -- introspection -------------------------------------------------------------------------

    @property
    def requests_in_flight(self) -> int:
        """Requests from the peer that still owe an answer."""
        return len(self._inbound)

    @property
    def requests_pending(self) -> int:
        """Our requests still waiting for an answer."""
        return len(self._outbound)

    @property
    def has_data_to_send(self) -> bool:
        return bool(self._outbox)

    def data_to_send(self) -> list[Outgoing]:
        """Take the queued outgoing messages (serialized JSON, no framing)."""
        out = self._outbox
        self._outbox = []
        return out

    def next_deadline(self) -> float | None:
        """When `expire` next has work to do, or None."""
        return self._deadline_queue.next_at(self._deadlines)

    # -- inbound -------------------------------------------------------------------------------

    def receive(self, data: bytes | str | Request, now: float) -> list[Event]:
        """Take in one JSON text (one stdio line, one HTTP body), or a single request that
        `jsonrpc.parse` already made of one (an HTTP transport that parsed a 2026-07-28 POST
        to check it hands over the request instead of having it parsed twice)."""
        if self.state is State.CLOSED:
            return []
        parsed = data if isinstance(data, Request) else parse(data)
        events: list[Event] = []
        if type(parsed) is list:
            self._receive_batch(parsed, now, events)
        else:
            self._receive_one(parsed, now, events, None)  # type: ignore[arg-type]
        return events

    def _receive_one(
        self, msg: Message | Invalid, now: float, events: list[Event], batch: _Batch | None
    ) -> None:
        kind = type(msg)
        if kind is Request:
            self._on_request(msg, events, batch)  # type: ignore[arg-type]
        elif kind is Notification:
            self._on_notification(msg, now, events)  # type: ignore[arg-type]
        elif kind is Response:
            self._on_response(msg, events)  # type: ignore[arg-type]
        elif kind is ErrorResponse:
            self._on_error_response(msg, events)  # type: ignore[arg-type]
        else:
            invalid: Invalid = msg  # type: ignore[assignment]
            if invalid.reply:
                error = encode_error(invalid.id, invalid.code, invalid.message)
                self._reply(invalid.id, error, batch)
            events.append(MessageRejected(invalid.code, invalid.message, invalid.id))

    def _receive_batch(
        self, items: list[Message | Invalid], now: float, events: list[Event]
    ) -> None:
        if self.protocol_version not in BATCH_VERSIONS:
            revision = self.protocol_version or "none negotiated yet"
            message = (
                "Invalid Request: JSON-RPC batches are only accepted at protocol revision "
                f"2025-03-26 (this session: {revision})"
            )
            self._outbox.append((encode_error(None, INVALID_REQUEST, message), None))
            events.append(MessageRejected(INVALID_REQUEST, message, None))
            return
        first = next((item.id for item in items if type(item) is Request), None)
        batch = _Batch(first)
        for item in items:
            if type(item) is Request and item.method == "initialize":
                message = "Invalid Request: initialize must not be part of a JSON-RPC batch"
                self._reply(item.id, encode_error(item.id, INVALID_REQUEST, message), batch)
                events.append(MessageRejected(INVALID_REQUEST, message, item.id))
                continue
            self._receive_one(item, now, events, batch)
        batch.sealed = True
        self._flush_batch(batch)

    def _on_request(self, msg: Request, events: list[Event], batch: _Batch | None) -> None:
        request_id, method = msg.id, msg.method
        if request_id in self._inbound:
            self._reject(
                request_id,
                INVALID_REQUEST,
                f"Invalid Request: id {request_id!r} is already used by a request in flight",
                events,
                batch,
            )
            return
        if self.role == "server":
            if method == "initialize":
                self._on_initialize(msg, events, batch)
                return
            meta = request_meta(msg.params)
            if meta is not None and _ENVELOPE_KEY in meta:
                self._on_modern_request(msg, meta, events, batch)
                return
        if method == "ping":  # allowed in every state, answered here
            self._reply(request_id, encode_result(request_id, {}), batch)
            return
        if not self._accepts_requests():
            self._reject_early(request_id, method, events, batch)
            return
        info = self._accepted.get(method)
        if info is None or self._undeclared(info, self.config.capabilities) is not None:
            self._reject(request_id, METHOD_NOT_FOUND, f"Method not found: {method}", events, batch)
            return
        params = msg.params
        token = None
        if params is not None:
            meta = params.get("_meta")
            if type(meta) is dict:
                token = meta.get("progressToken")
                if not is_valid_id(token):
                    token = None
        self._inbound[request_id] = _Inbound(method, token, batch)
        if batch is not None:
            batch.waiting.add(request_id)
        events.append(RequestReceived(request_id, method, params, token))

    def _reject_early(
        self, request_id: RequestId, method: str, events: list[Event], batch: _Batch | None
    ) -> None:
        if self.role == "server" and self.state is State.NEW:
            # Neither era: not initialized, and no per-request envelope either.
            message = (
                f"Invalid params: {method} carries no _meta.{_ENVELOPE_KEY}; a 2026-07-28 "
                "request must carry its protocol version and client capabilities, an "
                "earlier client must send initialize first"
            )
            self._reject(request_id, INVALID_PARAMS, message, events, batch)
            return
        message = (
            f"Invalid Request: {method} before initialization; only ping is allowed until "
            "the initialize handshake completes"
        )
        self._reject(request_id, INVALID_REQUEST, message, events, batch)

    def _on_modern_request(
        self, msg: Request, meta: JSONObject, events: list[Event], batch: _Batch | None
    ) -> None:
        """A 2026-07-28 request: checked and served on its own, whatever the connection's era."""
        request_id, method = msg.id, msg.method
        envelope = msg.envelope  # read by the transport already (HTTP), against its versions
        if envelope is None or envelope.version not in self._all_versions:
            try:
                envelope = read_envelope(meta, self._all_versions)
            except ProtocolError as exc:
                self._reply(
                    request_id, encode_error(request_id, exc.code, exc.message, exc.data), batch
                )
                events.append(MessageRejected(exc.code, exc.message, request_id))
                return
        if method == "server/discover":
            config = self.config
            result = discover_result(config.all_versions, config.capabilities, config.instructions)
            data = encode_result(request_id, self._result_stamp().result(method, result))
            self._reply(request_id, data, batch)
            return
        info = self._modern_method(envelope.version, method)
        if info is None:
            self._reject(request_id, METHOD_NOT_FOUND, f"Method not found: {method}", events, batch)
            return
        token = meta.get("progressToken")
        if not is_valid_id(token):
            token = None
        self._inbound[request_id] = _Inbound(method, token, batch, envelope)
        if batch is not None:
            batch.waiting.add(request_id)
        events.append(RequestReceived(request_id, method, msg.params, token, envelope))

    def _modern_method(self, version: str, method: str) -> MethodInfo | None:
        """The registry entry of a request served per request at `version`, or None when we
        do not serve it (unknown there, or a capability we did not declare). The answer is
        fixed by the configuration, so it is worked out once per (version, method); the
        table is bounded by the methods of the registry."""
        key = (version, method)
        known = self._modern_methods
        if key in known:
            return known[key]
        info = inbound_requests("server", version).get(method)
        if info is not None and self._undeclared(info, self.config.capabilities, version):
            info = None
        if info is not None or method in METHODS:
            known[key] = info
        return info

    def _result_stamp(self) -> ResultStamp:
        if self._stamp is None:
            config = self.config
            hints = DEFAULT_CACHE_HINTS if config.cache_hints is None else config.cache_hints
            self._stamp = ResultStamp(config.info if config.announce else None, hints)
        return self._stamp

    def _accepts_requests(self) -> bool:
        if self.role == "server":
            return self.state is State.INITIALIZING or self.state is State.READY
        return self.state is State.READY

    def _on_initialize(self, msg: Request, events: list[Event], batch: _Batch | None) -> None:
        if self.state is not State.NEW:
            message = "Invalid Request: initialize was already received on this connection"
            self._reject(msg.id, INVALID_REQUEST, message, events, batch)
            return
        problem = check_initialize_params(msg.params)
        if problem is not None:
            self._reject(msg.id, INVALID_PARAMS, f"Invalid params: {problem}", events, batch)
            return
        params: JSONObject = msg.params  # type: ignore[assignment]
        version = negotiate_version(params["protocolVersion"], self.config.versions)
        self.protocol_version = version
        self.peer_info = params["clientInfo"]
        self.peer_capabilities = params["capabilities"]
        self._accepted = inbound_requests("server", version)
        result: JSONObject = {
            "protocolVersion": version,
            "capabilities": self.config.capabilities,
            "serverInfo": self.config.info,
        }
        if self.config.instructions is not None:
            result["instructions"] = self.config.instructions
        self.state = State.INITIALIZING
        self._reply(msg.id, encode_result(msg.id, result), batch)

    def _on_notification(self, msg: Notification, now: float, events: list[Event]) -> None:
        method = msg.method
        params = msg.params or {}
        if method == "notifications/cancelled":
            self._on_cancelled(params, events)
        elif method == "notifications/progress":
            self._on_progress(params, now, events)
        elif method == "notifications/initialized":
            if self.role == "server" and self.state is State.INITIALIZING:
                self.state = State.READY
                events.append(
                    Initialized(
                        self.protocol_version or "",
                        self.peer_info or {},
                        self.peer_capabilities or {},
                        None,
                        {},
                    )
                )
        else:
            events.append(NotificationReceived(method, msg.params))

    def _on_cancelled(self, params: JSONObject, events: list[Event]) -> None:
        # Unknown, finished or malformed cancellations are ignored, as the spec asks.
        request_id = params.get("requestId")
        if not is_valid_id(request_id):
            return
        entry = self._inbound.pop(request_id, None)
        if entry is None:
            return
        if entry.batch is not None:
            entry.batch.waiting.discard(request_id)
            self._flush_batch(entry.batch)
        reason = params.get("reason")
        events.append(RequestCancelled(request_id, reason if type(reason) is str else None))

    def _on_progress(self, params: JSONObject, now: float, events: list[Event]) -> None:
        token = params.get("progressToken")
        progress: float = params.get("progress")  # type: ignore[assignment]  # checked next
        if not is_valid_id(token) or type(progress) not in (int, float):
            return
        request_id = self._progress_tokens.get(token)
        entry = None if request_id is None else self._outbound.get(request_id)
        if request_id is None or entry is None:
            return
        if entry.last_progress is not None and progress <= entry.last_progress:
            return  # progress must increase; a stale or repeated value is dropped
        entry.last_progress = progress
        deadline = self._deadlines.get(request_id)
        if deadline is not None and deadline.on_progress(now) and deadline.at is not None:
            self._deadline_queue.push(deadline.at, request_id)
        total = params.get("total")
        message = params.get("message")
        events.append(
            ProgressReceived(
                request_id,
                progress,
                total if type(total) in (int, float) else None,
                message if type(message) is str else None,
            )
        )

    def _on_response(self, msg: Response, events: list[Event]) -> None:
        entry = self._pop_outbound(msg.id)
        if entry is None:
            return  # a late answer to a cancelled or timed-out request: ignored
        if msg.id == self._initialize_id:
            self._finish_initialize(msg.result, events)
        else:
            events.append(ResponseReceived(msg.id, entry.method, msg.result))

    def _on_error_response(self, msg: ErrorResponse, events: list[Event]) -> None:
        error = ProtocolError.from_error_object(msg.error)
        if msg.id is None:
            # The peer could not read something we sent; nothing to resolve.
            events.append(MessageRejected(error.code, error.message, None))
            return
        entry = self._pop_outbound(msg.id)
        if entry is None:
            return
        if msg.id == self._initialize_id:
            self.state = State.CLOSED
            events.append(InitializeFailed(error))
        else:
            events.append(ErrorReceived(msg.id, entry.method, error))

    def _reject(
        self,
        request_id: RequestId,
        code: int,
        message: str,
        events: list[Event],
        batch: _Batch | None,
    ) -> None:
        self._reply(request_id, encode_error(request_id, code, message), batch)
        events.append(MessageRejected(code, message, request_id))

    def _reply(self, request_id: RequestId | None, data: bytes, batch: _Batch | None) -> None:
        if batch is None:
            self._outbox.append((data, request_id))
        else:
            batch.replies.append(data)

    def _flush_batch(self, batch: _Batch) -> None:
        if batch.sealed and not batch.waiting and batch.replies:
            self._outbox.append((b"[" + b",".join(batch.replies) + b"]", batch.related))
            batch.replies = []

    # -- handshake (client) --------------------------------------------------------------------

    def start_initialize(
        self, *, now: float, timeout: Timeout | None = None, version: str | None = None
    ) -> RequestId:
        """Send `initialize` (client role). Ends in an `Initialized` or `InitializeFailed` event."""
        if self.role != "client" or self.state is not State.NEW:
            raise LocalProtocolViolation(
                "initialize is sent once, by a client, before anything else"
            )
        offered = version or self.config.versions[-1]
        params = initialize_params(offered, self.config.capabilities, self.config.info)
        request_id = self._register_outbound("initialize", None, timeout, now)
        self._initialize_id = request_id
        self.state = State.INITIALIZING
        self._outbox.append((encode_request(request_id, "initialize", params), request_id))
        return request_id

    def _finish_initialize(self, result: JSONObject, events: list[Event]) -> None:
        problem = check_initialize_result(result)
        if problem is not None:
            self.state = State.CLOSED
            events.append(InitializeFailed(ProtocolError(INVALID_PARAMS, problem)))
            return
        version: str = result["protocolVersion"]
        if version not in self.config.versions:
            self.state = State.CLOSED
            events.append(
                InitializeFailed(UnsupportedProtocolVersion(version, self.config.versions))
            )
            return
        self.protocol_version = version
        self.peer_info = result["serverInfo"]
        self.peer_capabilities = result["capabilities"]
        instructions = result.get("instructions")
        self.instructions = instructions if type(instructions) is str else None
        self._accepted = inbound_requests("client", version)
        self.state = State.READY
        self._outbox.append((encode_notification("notifications/initialized", None), None))
        events.append(
            Initialized(version, self.peer_info, self.peer_capabilities, self.instructions, result)
        )

    # -- per-request era (client) --------------------------------------------------------------

    def use_modern(self, version: str, discovered: JSONObject | None = None) -> None:
        """Client: speak `version` (2026-07-28 on) with no handshake; every request we send
        carries the envelope. `discovered` is a server/discover result, when there is one."""
        if self.role != "client" or self.state not in (State.NEW, State.READY):
            raise LocalProtocolViolation("use_modern is for a client that has not initialized")
        if version not in self.config.modern:
            raise LocalProtocolViolation(f"{version} is not a per-request revision we speak")
        self._envelope = envelope_meta(version, self.config.capabilities, self.config.info)
        self.protocol_version = version
        self.state = State.READY
        self._accepted = {}  # a modern server sends no requests
        self._allowed_requests.clear()
        if discovered is not None:
            capabilities = discovered.get("capabilities")
            self.peer_capabilities = capabilities if type(capabilities) is dict else {}
            meta = discovered.get("_meta")
            info = meta.get("io.modelcontextprotocol/serverInfo") if type(meta) is dict else None
            self.peer_info = info if type(info) is dict else None
            instructions = discovered.get("instructions")
            self.instructions = instructions if type(instructions) is str else None

    def use_handshake(self) -> None:
        """Client: back to the handshake era (the server did not answer the modern probe)."""
        if self.role != "client" or self._envelope is None:
            raise LocalProtocolViolation("use_handshake undoes use_modern, on a client")
        self._envelope = None
        self.protocol_version = None
        self.peer_capabilities = self.peer_info = self.instructions = None
        self._allowed_requests.clear()
        self.state = State.NEW

    # -- outbound ------------------------------------------------------------------------------

    def send_request(
        self,
        method: str,
        params: JSONObject | None = None,
        *,
        now: float,
        timeout: Timeout | None = None,
        progress: bool = False,
        related_id: RequestId | None = None,
    ) -> RequestId:
        """Queue a request; returns its id. With `progress`, a progress token is attached.

        Raises ConnectionClosed, CapabilityNotDeclared (the peer did not declare what `method`
        needs), LocalProtocolViolation (not allowed in this state or revision).
        """
        self._check_request_allowed(method)
        if self._envelope is not None:
            params = stamp(params, self._envelope)
        token = None
        if progress:
            token = self._next_id
            params = dict(params or {})
            meta = params.get("_meta")
            params["_meta"] = {**meta, "progressToken": token} if meta else {"progressToken": token}
        request_id = self._register_outbound(method, token, timeout, now)
        self._outbox.append((encode_request(request_id, method, params), related_id))
        return request_id

    def _register_outbound(
        self, method: str, token: RequestId | None, timeout: Timeout | None, now: float
    ) -> RequestId:
        request_id = self._next_id
        self._next_id += 1
        self._outbound[request_id] = _Outbound(method, token)
        if token is not None:
            self._progress_tokens[token] = request_id
        if timeout is not None:
            deadline = Deadline(timeout, now)
            if deadline.at is not None:
                self._deadlines[request_id] = deadline
                self._deadline_queue.push(deadline.at, request_id)
        return request_id

    def _check_request_allowed(self, method: str) -> None:
        if method in self._allowed_requests and self.state is State.READY:
            return  # checked before: revision and capabilities are fixed after the handshake
        self._check_request_rules(method)
        if self.state is State.READY:
            self._allowed_requests.add(method)

    def _check_request_rules(self, method: str) -> None:
        if self.state is State.CLOSED:
            raise ConnectionClosed("the connection is closed")
        if method == "initialize":
            raise LocalProtocolViolation("initialize is sent by start_initialize(), by a client")
        if method == "ping" and self._envelope is None:
            return
        if self.state is not State.READY:
            raise LocalProtocolViolation(
                f"cannot send {method} before initialization completes; only ping is allowed"
            )
        info = self._outbound_info(method)
        if info is None:
            return
        if info.kind != "request":
            raise LocalProtocolViolation(f"{method} is a notification, not a request")
        if self._envelope is not None and self.peer_capabilities is None:
            return  # modern, not discovered: the server's answer tells
        missing = self._undeclared(info, self.peer_capabilities)
        if missing is not None:
            peer = "server" if self.role == "client" else "client"
            raise CapabilityNotDeclared(method, missing, peer)

    def _undeclared(
        self, info: MethodInfo, capabilities: JSONObject | None, version: str | None = None
    ) -> tuple[str, ...] | None:
        """The capability `info` needs at this revision that `capabilities` lacks, or None."""
        needed = info.capability_at(version or self.protocol_version or "")
        if needed is None or has_capability(capabilities, needed):
            return None
        return needed

    def _outbound_info(self, method: str) -> MethodInfo | None:
        """Registry entry for a method we send; None for methods outside the spec (extensions)."""
        info = outbound_methods(self.role, self.protocol_version or "").get(method)
        if info is None and method in METHODS:
            raise LocalProtocolViolation(
                f"a {self.role} cannot send {method} at protocol revision {self.protocol_version}"
            )
        return info

    def send_notification(
        self, method: str, params: JSONObject | None = None, *, related_id: RequestId | None = None
    ) -> None:
        """Queue a notification. Raises like `send_request`; capabilities checked are our own."""
        if self.state is State.CLOSED:
            raise ConnectionClosed("the connection is closed")
        if method in _RESERVED_NOTIFICATIONS:
            raise LocalProtocolViolation(f"{method} is sent by the connection itself")
        related = None if related_id is None else self._inbound.get(related_id)
        if related is not None and related.envelope is not None:
            self._check_modern_notification(method, related.envelope.version)
            self._outbox.append((encode_notification(method, params), related_id))
            return
        early_log = (
            self.role == "server"
            and self.state is State.INITIALIZING
            and method == "notifications/message"
        )
        if self.state is not State.READY and not early_log:
            raise LocalProtocolViolation(f"cannot send {method} before initialization completes")
        info = self._outbound_info(method)
        missing = None if info is None else self._undeclared(info, self.config.capabilities)
        if missing is not None:
            raise CapabilityNotDeclared(method, missing, f"{self.role} (you)")
        self._outbox.append((encode_notification(method, params), related_id))

    def _check_modern_notification(self, method: str, version: str) -> None:
        # Related to a modern request: allowed whatever our handshake state is.
        info = outbound_methods(self.role, version).get(method)
        if info is None and method in METHODS:
            raise LocalProtocolViolation(
                f"a {self.role} cannot send {method} at revision {version}"
            )
        if info is not None:
            missing = self._undeclared(info, self.config.capabilities, version)
            if missing is not None:
                raise CapabilityNotDeclared(method, missing, f"{self.role} (you)")

    def send_progress(
        self,
        request_id: RequestId,
        progress: float,
        total: float | None = None,
        message: str | None = None,
    ) -> bool:
        """Report progress on a request the peer sent us. False when nobody is listening
        (the peer gave no progress token, or the request is already answered or cancelled).

        Raises LocalProtocolViolation when `progress` does not increase.
        """
        entry = self._inbound.get(request_id)
        if entry is None or entry.progress_token is None:
            return False
        if entry.last_progress is not None and progress <= entry.last_progress:
            raise LocalProtocolViolation(
                f"progress must increase with each notification ({progress} after "
                f"{entry.last_progress})"
            )
        entry.last_progress = progress
        params: JSONObject = {"progressToken": entry.progress_token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None and self.protocol_version != "2024-11-05":
            params["message"] = message
        self._outbox.append((encode_notification("notifications/progress", params), request_id))
        return True

    def send_result(self, request_id: RequestId, result: JSONObject | Prepared) -> bool:
        """Answer a request. False when no answer is owed (cancelled, or already answered)."""
        entry = self._inbound.pop(request_id, None)
        if entry is None:
            return False
        if entry.envelope is not None:
            stamper = self._result_stamp()
            if type(result) is Prepared:
                result = stamper.prepared(entry.method, result)
            else:
                result = stamper.result(entry.method, result)  # type: ignore[arg-type]
        try:
            data = encode_result(request_id, result)
        except TypeError as exc:
            message = f"Internal error: the result is not JSON-serializable ({exc})"
            data = encode_error(request_id, INTERNAL_ERROR, message)
        self._deliver(request_id, data, entry.batch)
        return True

    def send_error(self, request_id: RequestId, code: int, message: str, data: Any = None) -> bool:
        """Answer a request with an error. False when no answer is owed."""
        entry = self._inbound.pop(request_id, None)
        if entry is None:
            return False
        self._deliver(request_id, encode_error(request_id, code, message, data), entry.batch)
        return True

    def _deliver(self, request_id: RequestId, data: bytes, batch: _Batch | None) -> None:
        if batch is None:
            self._outbox.append((data, request_id))
            return
        batch.waiting.discard(request_id)
        batch.replies.append(data)
        self._flush_batch(batch)

    def cancel(self, request_id: RequestId, reason: str | None = None) -> bool:
        """Cancel one of our requests: the peer is told, a late answer is ignored.

        False when the request is no longer pending. Raises LocalProtocolViolation for
        initialize, which cannot be cancelled.
        """
        entry = self._outbound.get(request_id)
        if entry is None:
            return False
        if entry.method == "initialize":
            raise LocalProtocolViolation("initialize cannot be cancelled")
        self._pop_outbound(request_id)
        params: JSONObject = {"requestId": request_id}
        if reason is not None:
            params["reason"] = reason
        self._outbox.append((encode_notification("notifications/cancelled", params), request_id))
        return True

    def _pop_outbound(self, request_id: RequestId) -> _Outbound | None:
        entry = self._outbound.pop(request_id, None)
        if entry is not None:
            self._deadlines.pop(request_id, None)
            if entry.progress_token is not None:
                self._progress_tokens.pop(entry.progress_token, None)
        return entry

    # -- time and end --------------------------------------------------------------------------

    def expire(self, now: float) -> list[Event]:
        """Time out what is due: each request is cancelled and reported as timed out."""
        events: list[Event] = []
        for request_id in self._deadline_queue.pop_expired(now, self._deadlines):
            limit = self._deadlines[request_id].effective_timeout()
            entry = self._outbound[request_id]
            if entry.method == "initialize":
                self._pop_outbound(request_id)
                self.state = State.CLOSED
                events.append(InitializeFailed(RequestTimeout("initialize", limit)))
                continue
            self.cancel(request_id, f"timed out after {limit:g} s")
            events.append(RequestTimedOut(request_id, entry.method, limit))
        return events

    def connection_lost(self) -> list[tuple[RequestId, str]]:
        """The transport is gone. Returns our pending requests (id, method), now failed."""
        self.state = State.CLOSED
        pending = [(request_id, entry.method) for request_id, entry in self._outbound.items()]
        self._outbound.clear()
        self._inbound.clear()
        self._progress_tokens.clear()
        self._deadlines.clear()
        return pending
