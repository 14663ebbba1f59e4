"""The sans-IO MCP connection: one object for both roles, no I/O, no clock.

Feed it what arrived (`receive(data, now)`: bytes, or what `jsonrpc.parse` made of them), the
passage of time (`expire(now)`) and what you want to say (`send_request`, `send_result`,
`send_notification`, `cancel`, ...). It answers with events and queues outgoing messages; take
them with `data_to_send()` (`Outgoing` records: the bytes and the facts a transport routes
them by) and frame them as your transport does (a line on stdio, a body or an SSE event over
HTTP).

A server connection serves the handshake era, and also 2026-07-28 requests that arrive on it
(over stdio both eras share the pipe); those are served by the rules of the server's
configuration as it is when each arrives (`rules`, see `serving.py`).

Guarantees: every request the peer sends gets exactly one answer unless the peer cancels it;
malformed input becomes an error answer (or is dropped where none is owed) and never disturbs
other requests in flight; a request we send ends in exactly one of response, error, timeout,
cancellation or connection loss.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from typing import Any

from mcpkit.errors import (
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
from mcpkit.protocol.config import ConnectionConfig
from mcpkit.protocol.deadlines import Timeout
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
    Parsed,
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
    check_initialize_result,
    inbound_requests,
    initialize_params,
    outbound_methods,
)
from mcpkit.protocol.modern import PROTOCOL_VERSION as _ENVELOPE_KEY
from mcpkit.protocol.modern import envelope_meta, request_meta, stamp
from mcpkit.protocol.outbound import OutboundRequests
from mcpkit.protocol.outgoing import Outgoing, answer
from mcpkit.protocol.serving import (
    Batch,
    Inbound,
    ServerRules,
    notification,
    progress_token,
    refusal,
    undeclared,
)
from mcpkit.types.methods import METHODS, MethodInfo

JSONObject = dict[str, Any]

# Notifications the connection sends itself, through dedicated calls.
_RESERVED_NOTIFICATIONS = frozenset(
    {"notifications/cancelled", "notifications/progress", "notifications/initialized"}
)
__all__ = ["Connection", "ConnectionConfig", "Outgoing", "State"]


class State(Enum):
    NEW = "new"  # nothing exchanged yet
    INITIALIZING = "initializing"  # client: initialize sent; server: answered, awaiting initialized
    READY = "ready"
    CLOSED = "closed"


class Connection:
    """One side of an MCP conversation (client or server), as a pure state machine.

    `rules` (server): the serving rules of the server's configuration as it is now; called for
    each 2026-07-28 request and at `initialize`. Without it, `config` serves throughout.
    """

    def __init__(
        self, config: ConnectionConfig, rules: Callable[[], ServerRules] | None = None
    ) -> None:
        self.config = config
        self.role: Role = config.role
        self.state = State.NEW
        self.protocol_version: str | None = None
        self.peer_info: JSONObject | None = None
        self.peer_capabilities: JSONObject | None = None
        self.instructions: str | None = None  # the server's, as seen by a client
        if rules is None and config.role == "server":
            fixed = ServerRules(config)
            rules = lambda: fixed  # noqa: E731 - the one-line constant provider
        self._rules = rules
        self._outbox: list[Outgoing] = []
        self._inbound: dict[RequestId, Inbound] = {}
        self._outbound = OutboundRequests()
        self._initialize_id: RequestId | None = None
        self._accepted: dict[str, MethodInfo] = {}
        self._allowed_requests: set[str] = set()
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
        return self._outbound.next_id

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
        return self._outbound.next_deadline()

    # -- inbound -------------------------------------------------------------------------------

    def receive(self, data: bytes | str | Parsed, now: float) -> list[Event]:
        """Take in one JSON text (one stdio line, one HTTP body), or what `jsonrpc.parse` made
        of one (a transport that parsed a body to route it hands that over, parsed once)."""
        if self.state is State.CLOSED:
            return []
        parsed = parse(data) if isinstance(data, bytes | str) else data
        events: list[Event] = []
        if type(parsed) is list:
            self._receive_batch(parsed, now, events)
        else:
            self._receive_one(parsed, now, events, None)  # type: ignore[arg-type]
        return events

    def _receive_one(
        self, msg: Message | Invalid, now: float, events: list[Event], batch: Batch | None
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
                self._reply(answer(error, invalid.id, invalid.code), batch)
            events.append(MessageRejected(invalid.code, invalid.message, invalid.id))

    def _receive_batch(
        self, items: list[Message | Invalid], now: float, events: list[Event]
    ) -> None:
        if self.protocol_version not in BATCH_VERSIONS:
            message = batch_refused(self.protocol_version)
            self._outbox.append(answer(encode_error(None, INVALID_REQUEST, message), None))
            events.append(MessageRejected(INVALID_REQUEST, message, None))
            return
        batch = Batch(next((item.id for item in items if type(item) is Request), None))
        for item in items:
            if type(item) is Request and item.method == "initialize":
                message = "Invalid Request: initialize must not be part of a JSON-RPC batch"
                self._reject(item.id, INVALID_REQUEST, message, events, batch)
                continue
            self._receive_one(item, now, events, batch)
        batch.sealed = True
        self._send_batch(batch.ready())

    def _on_request(self, msg: Request, events: list[Event], batch: Batch | None) -> None:
        request_id, method = msg.id, msg.method
        if request_id in self._inbound:
            message = f"Invalid Request: id {request_id!r} is already used by a request in flight"
            self._reject(request_id, INVALID_REQUEST, message, events, batch)
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
            self._reply(answer(encode_result(request_id, {}), request_id), batch)
            return
        if not self._accepts_requests():
            self._reject_early(request_id, method, events, batch)
            return
        info = self._accepted.get(method)
        version = self.protocol_version or ""
        if info is None or undeclared(info, self.config.capabilities, version) is not None:
            self._reject(request_id, METHOD_NOT_FOUND, f"Method not found: {method}", events, batch)
            return
        token = progress_token(msg.params)
        self._accept(Inbound(request_id, method, token, version, batch=batch), msg, events)

    def _accept(self, entry: Inbound, msg: Request, events: list[Event]) -> None:
        self._inbound[entry.id] = entry
        if entry.batch is not None:
            entry.batch.waiting.add(entry.id)
        token = entry.progress_token
        events.append(RequestReceived(entry.id, entry.method, msg.params, token, entry.envelope))

    def _reject_early(
        self, request_id: RequestId, method: str, events: list[Event], batch: Batch | None
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
        self, msg: Request, meta: JSONObject, events: list[Event], batch: Batch | None
    ) -> None:
        """A 2026-07-28 request: checked and served on its own, whatever the connection's era."""
        rules = self._rules()  # type: ignore[misc]  # a server always has rules
        try:
            accepted = rules.accept_modern(msg, rules.envelope(meta), batch)
        except ProtocolError as exc:
            self._reply(refusal(msg.id, exc), batch)
            events.append(MessageRejected(exc.code, exc.message, msg.id))
            return
        if type(accepted) is Outgoing:
            self._reply(accepted, batch)
        else:
            self._accept(accepted, msg, events)  # type: ignore[arg-type]

    def _accepts_requests(self) -> bool:
        if self.role == "server":
            return self.state is State.INITIALIZING or self.state is State.READY
        return self.state is State.READY

    def _on_initialize(self, msg: Request, events: list[Event], batch: Batch | None) -> None:
        if self.state is not State.NEW:
            message = "Invalid Request: initialize was already received on this connection"
            self._reject(msg.id, INVALID_REQUEST, message, events, batch)
            return
        rules = self._rules()  # type: ignore[misc]  # a server always has rules
        try:
            version, result = rules.initialize(msg.params)
        except ProtocolError as exc:
            self._reject(msg.id, exc.code, exc.message, events, batch)
            return
        params: JSONObject = msg.params  # type: ignore[assignment]  # checked by initialize
        self.config = rules.config  # what we declared is what this session lives by
        self.protocol_version = version
        self.peer_info = params["clientInfo"]
        self.peer_capabilities = params["capabilities"]
        self._accepted = inbound_requests("server", version)
        self.state = State.INITIALIZING
        data = encode_result(msg.id, result)
        self._reply(Outgoing(data, msg.id, True, version=version), batch)

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
            self._send_batch(entry.batch.forget(request_id))
        reason = params.get("reason")
        events.append(RequestCancelled(request_id, reason if type(reason) is str else None))

    def _on_progress(self, params: JSONObject, now: float, events: list[Event]) -> None:
        token = params.get("progressToken")
        progress: float = params.get("progress")  # type: ignore[assignment]  # checked next
        if not is_valid_id(token) or type(progress) not in (int, float):
            return
        found = self._outbound.by_token(token)
        if found is None:
            return
        request_id, entry = found
        if entry.last_progress is not None and progress <= entry.last_progress:
            return  # progress must increase; a stale or repeated value is dropped
        entry.last_progress = progress
        self._outbound.progressed(request_id, now)
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
        entry = self._outbound.pop(msg.id)
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
        entry = self._outbound.pop(msg.id)
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
        batch: Batch | None,
    ) -> None:
        self._reply(answer(encode_error(request_id, code, message), request_id, code), batch)
        events.append(MessageRejected(code, message, request_id))

    def _reply(self, out: Outgoing, batch: Batch | None) -> None:
        if batch is None:
            self._outbox.append(out)
        else:
            batch.replies.append(out.data)

    def _send_batch(self, out: Outgoing | None) -> None:
        if out is not None:
            self._outbox.append(out)

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
        request_id = self._outbound.register("initialize", progress=False, timeout=timeout, now=now)
        self._initialize_id = request_id
        self.state = State.INITIALIZING
        data = encode_request(request_id, "initialize", params)
        self._outbox.append(Outgoing(data, method="initialize", id=request_id, params=params))
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
        data = encode_notification("notifications/initialized", None)
        self._outbox.append(Outgoing(data, method="notifications/initialized", version=version))
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
        modern = self._envelope is not None
        if modern:
            params = stamp(params, self._envelope)  # type: ignore[arg-type]
        outbound = self._outbound
        if progress:
            token = outbound.next_id
            params = dict(params or {})
            meta = params.get("_meta")
            params["_meta"] = {**meta, "progressToken": token} if meta else {"progressToken": token}
        request_id = outbound.register(
            method, progress=progress, timeout=timeout, now=now, related=related_id
        )
        data = encode_request(request_id, method, params)
        version = self.protocol_version if modern else None
        out = Outgoing(data, related_id, False, None, version, method, request_id, params)
        self._outbox.append(out)
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
        missing = undeclared(info, self.peer_capabilities, self.protocol_version or "")
        if missing is not None:
            peer = "server" if self.role == "client" else "client"
            raise CapabilityNotDeclared(method, missing, peer)

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
            self._outbox.append(related.notification(method, params))
            return
        early_log = (
            self.role == "server"
            and self.state is State.INITIALIZING
            and method == "notifications/message"
        )
        if self.state is not State.READY and not early_log:
            raise LocalProtocolViolation(f"cannot send {method} before initialization completes")
        info = self._outbound_info(method)
        version = self.protocol_version or ""
        missing = None if info is None else undeclared(info, self.config.capabilities, version)
        if missing is not None:
            raise CapabilityNotDeclared(method, missing, f"{self.role} (you)")
        self._outbox.append(notification(method, params, related_id))

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
        out = None if entry is None else entry.progress(progress, total, message)
        if out is None:
            return False
        self._outbox.append(out)
        return True

    def send_result(self, request_id: RequestId, result: JSONObject | Prepared) -> bool:
        """Answer a request. False when no answer is owed (cancelled, or already answered)."""
        entry = self._inbound.pop(request_id, None)
        if entry is None:
            return False
        self._deliver(entry, entry.result(result))
        return True

    def send_error(self, request_id: RequestId, code: int, message: str, data: Any = None) -> bool:
        """Answer a request with an error. False when no answer is owed."""
        entry = self._inbound.pop(request_id, None)
        if entry is None:
            return False
        self._deliver(entry, entry.error(code, message, data))
        return True

    def _deliver(self, entry: Inbound, out: Outgoing) -> None:
        if entry.batch is None:
            self._outbox.append(out)
        else:
            self._send_batch(entry.batch.add(out.data, entry.id))

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
        self._outbound.pop(request_id)
        params: JSONObject = {"requestId": request_id}
        if reason is not None:
            params["reason"] = reason
        self._outbox.append(notification("notifications/cancelled", params, entry.related))
        return True

    # -- time and end --------------------------------------------------------------------------

    def expire(self, now: float) -> list[Event]:
        """Time out what is due: each request is cancelled and reported as timed out."""
        events: list[Event] = []
        for request_id, entry, limit in self._outbound.expired(now):
            if entry.method == "initialize":
                self._outbound.pop(request_id)
                self.state = State.CLOSED
                events.append(InitializeFailed(RequestTimeout("initialize", limit)))
                continue
            self.cancel(request_id, f"timed out after {limit:g} s")
            events.append(RequestTimedOut(request_id, entry.method, limit))
        return events

    def connection_lost(self) -> list[tuple[RequestId, str]]:
        """The transport is gone. Returns our pending requests (id, method), now failed."""
        self.state = State.CLOSED
        self._inbound.clear()
        return self._outbound.clear()


def batch_refused(version: str | None) -> str:
    """The -32600 message for a JSON-RPC batch at a revision that forbids batches."""
    revision = version or "none negotiated yet"
    return (
        "Invalid Request: JSON-RPC batches are only accepted at protocol revision "
        f"2025-03-26 (this session: {revision})"
    )
