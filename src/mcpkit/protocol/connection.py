"""The sans-IO MCP connection: one object for both roles, no I/O, no clock.

Feed it what arrived (`receive(data, now)`: bytes, or what `jsonrpc.parse` made of them), the
passage of time (`expire(now)`) and what you want to say (`send_request`, `send_result`,
`send_notification`, `cancel`, ...). It answers with events and queues outgoing messages; take
them with `data_to_send()` (`Outgoing` records: the bytes and the facts a transport routes
them by) and frame them as your transport does (a line on stdio, a body or an SSE event over
HTTP).

How it works. Three things decide what a message does, each kept in one place:
- the state (`states.py`): where the connection is in its life. It changes only in `_move`,
  which applies the transition table; what each state permits is read there too.
- the era (`eras.py`): None until one is agreed, then one object fixed while it lasts (the
  handshake's revision, or a client's per-request envelope) holding what that era settles.
- the message's kind: `receive` dispatches on its exact type, one handler per kind.

A server connection serves the handshake era, and also 2026-07-28 requests that arrive on it
(over stdio both eras share the pipe); those are served by the rules of the server's
configuration as it is when each arrives (`rules`, see `serving.py`), in any state.

Guarantees: every request the peer sends gets exactly one answer unless the peer cancels it;
malformed input becomes an error answer (or is dropped where none is owed) and never disturbs
other requests in flight; a request we send ends in exactly one of response, error, timeout,
cancellation or connection loss.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn

from mcpkit.errors import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    SERVER_ERROR,
    CapabilityNotDeclared,
    ConnectionClosed,
    LocalProtocolViolation,
    ProtocolError,
    RequestTimeout,
    UnsupportedProtocolVersion,
)
from mcpkit.protocol import tasks
from mcpkit.protocol.config import ConnectionConfig
from mcpkit.protocol.deadlines import Timeout
from mcpkit.protocol.eras import Era, HandshakeEra, PerRequestEra
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
    batch_refused,
    check_initialize_result,
    initialize_params,
    outbound_methods,
)
from mcpkit.protocol.outbound import OutboundRequests
from mcpkit.protocol.outgoing import Outgoing, answer
from mcpkit.protocol.per_request import PROTOCOL_VERSION as _ENVELOPE_KEY
from mcpkit.protocol.per_request import SERVER_INFO, stamp
from mcpkit.protocol.serving import (
    Batch,
    Inbound,
    ServerRules,
    notification,
    progress_token,
    refusal,
    undeclared,
)
from mcpkit.protocol.snapshot import SessionSnapshot
from mcpkit.protocol.states import (
    CLOSED,
    INITIALIZING,
    NEW,
    SENDS,
    SERVES_REQUESTS,
    State,
    Step,
    next_state,
)
from mcpkit.types.deprecation import warn_deprecated
from mcpkit.types.methods import METHODS, MethodInfo

JSONObject = dict[str, Any]
__all__ = ["Connection", "ConnectionConfig", "Outgoing", "State"]

# Notifications the connection sends itself, through dedicated calls.
_RESERVED_NOTIFICATIONS = frozenset(
    {"notifications/cancelled", "notifications/progress", "notifications/initialized"}
)


class Connection:
    """One side of an MCP conversation (client or server), as a pure state machine.

    Read `state` (a `State`, changed only by the transition table), `era` (None, a
    `HandshakeEra` or a `PerRequestEra`), `protocol_version`, and what the peer told about
    itself: `peer_info`, `peer_capabilities`, `instructions`.

    `rules` (server): the serving rules of the server's configuration as it is now; called for
    each 2026-07-28 request and at `initialize`. Without it, `config` serves throughout.
    """

    def __init__(
        self, config: ConnectionConfig, rules: Callable[[], ServerRules] | None = None
    ) -> None:
        self.config = config
        self.role: Role = config.role
        self.era: Era | None = None  # see eras.py; None until one is agreed
        self.peer_info: JSONObject | None = None
        self.peer_capabilities: JSONObject | None = None
        self.instructions: str | None = None  # the server's, as seen by a client
        self._server = config.role == "server"
        if rules is None:
            rules = _fixed(ServerRules(config)) if self._server else _no_rules
        self._rules: Callable[[], ServerRules] = rules
        self._outbox: list[Outgoing] = []
        self._inbound: dict[RequestId, Inbound] = {}
        self._outbound = OutboundRequests()
        self._initialize_id: RequestId | None = None
        self._state = NEW
        # What the state permits, from the tables of states.py; set by `_move` only.
        self._serving = False  # the peer's handshake-era requests are served
        self._sending = False  # we may send requests and notifications
        # Restored past a handshake whose `initialized` may still come here (`restore`).
        self._initialized_due = False

    # -- where it is ---------------------------------------------------------------------------

    @property
    def state(self) -> State:
        return self._state

    @property
    def protocol_version(self) -> str | None:
        """The revision of the era agreed (None before one is)."""
        era = self.era
        return None if era is None else era.version

    @property
    def per_request(self) -> bool:
        """Client: speaking a per-request revision (no handshake)."""
        return type(self.era) is PerRequestEra

    @property
    def modern(self) -> bool:
        """Deprecated spelling of `per_request` (until 0.1.0; eras named by mechanism)."""
        warn_deprecated("Connection.modern is deprecated; use Connection.per_request")
        return self.per_request

    @property
    def next_request_id(self) -> RequestId:
        """The id `send_request` gives the next request. A client that must route messages
        naming a request before its answer (a subscription's notifications carry its id)
        reads it just before sending."""
        return self._outbound.next_id

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

    def _move(self, step: Step) -> bool:
        """Take `step` by the transition table: the one place the state changes. False (and
        nothing changes) when the table does not allow `step` in the current state."""
        state = next_state(self.role, self._state, step)
        if state is None:
            return False
        self._state = state
        self._serving = state in SERVES_REQUESTS[self.role]
        self._sending = state in SENDS
        return True

    def _allows(self, step: Step) -> bool:
        return next_state(self.role, self._state, step) is not None

    def _refuse(self, message: str) -> NoReturn:
        """A local call the state does not allow: ConnectionClosed once closed, else
        LocalProtocolViolation(`message`)."""
        if self._state is CLOSED:
            raise ConnectionClosed("the connection is closed")
        raise LocalProtocolViolation(message)

    # -- opening (client) ----------------------------------------------------------------------

    def start_initialize(
        self, *, now: float, timeout: Timeout | None = None, version: str | None = None
    ) -> RequestId:
        """Send `initialize` (client role). Ends in an `Initialized` or `InitializeFailed` event.

        Raises LocalProtocolViolation (a server, or not the first thing sent), ConnectionClosed.
        """
        if not self._move(Step.SEND_INITIALIZE):
            self._refuse("initialize is sent once, by a client, before anything else")
        offered = version or self.config.versions[-1]
        params = initialize_params(offered, self.config.capabilities, self.config.info)
        request_id = self._outbound.register("initialize", progress=False, timeout=timeout, now=now)
        self._initialize_id = request_id
        data = encode_request(request_id, "initialize", params)
        self._outbox.append(Outgoing(data, method="initialize", id=request_id, params=params))
        return request_id

    def _finish_initialize(self, result: JSONObject, events: list[Event]) -> None:
        problem = check_initialize_result(result)
        if problem is not None:
            self._move(Step.INITIALIZE_FAILED)
            events.append(InitializeFailed(ProtocolError(INVALID_PARAMS, problem)))
            return
        version: str = result["protocolVersion"]
        if version not in self.config.versions:
            self._move(Step.INITIALIZE_FAILED)
            error = UnsupportedProtocolVersion(version, self.config.versions)
            events.append(InitializeFailed(error))
            return
        self.era = HandshakeEra("client", version, self.config.capabilities)
        self.peer_info = result["serverInfo"]
        self.peer_capabilities = result["capabilities"]
        instructions = result.get("instructions")
        self.instructions = instructions if type(instructions) is str else None
        self._move(Step.INITIALIZE_AGREED)
        data = encode_notification("notifications/initialized", None)
        self._outbox.append(Outgoing(data, method="notifications/initialized", version=version))
        events.append(
            Initialized(version, self.peer_info, self.peer_capabilities, self.instructions, result)
        )

    def use_modern(self, version: str, discovered: JSONObject | None = None) -> None:
        """Deprecated spelling of `use_per_request` (until 0.1.0)."""
        warn_deprecated("Connection.use_modern is deprecated; use Connection.use_per_request")
        self.use_per_request(version, discovered)

    def use_per_request(self, version: str, discovered: JSONObject | None = None) -> None:
        """Client: speak `version` (2026-07-28 on) with no handshake; every request we send
        carries the envelope. `discovered` is a server/discover result, when there is one.
        An `initialize` still unanswered (sent while the probe was pending) is abandoned: its
        answer will be ignored.

        Raises LocalProtocolViolation (a server, or a version we do not speak per request),
        ConnectionClosed.
        """
        if not self._allows(Step.USE_PER_REQUEST):
            self._refuse("use_per_request is for a client that has not initialized")
        if version not in self.config.per_request:
            raise LocalProtocolViolation(f"{version} is not a per-request revision we speak")
        if self._state is INITIALIZING and self._initialize_id is not None:
            self._outbound.pop(self._initialize_id)
            self._initialize_id = None
        self.era = PerRequestEra(version, self.config.capabilities, self.config.info)
        self._move(Step.USE_PER_REQUEST)
        if discovered is not None:
            capabilities = discovered.get("capabilities")
            self.peer_capabilities = capabilities if type(capabilities) is dict else {}
            meta = discovered.get("_meta")
            info = meta.get(SERVER_INFO) if type(meta) is dict else None
            self.peer_info = info if type(info) is dict else None
            instructions = discovered.get("instructions")
            self.instructions = instructions if type(instructions) is str else None

    def use_handshake(self) -> None:
        """Client: back to the handshake era (the server did not answer the 2026-07-28 probe).

        Raises LocalProtocolViolation when not speaking per request, ConnectionClosed."""
        if type(self.era) is not PerRequestEra or not self._move(Step.USE_HANDSHAKE):
            self._refuse("use_handshake undoes use_per_request, on a client")
        self.era = None
        self.peer_capabilities = self.peer_info = self.instructions = None

    # -- resuming (client) ----------------------------------------------------------------------

    def resume(self, result: JSONObject, *, first_request_id: int = 1) -> None:
        """Client: go on with a handshake-era session another process opened (a gateway's
        workers sharing their upstream sessions): READY as if this connection had sent
        `initialize`, received `result` (that session's InitializeResult: protocolVersion,
        capabilities, serverInfo, instructions) and sent `initialized`. Nothing is sent. Our
        requests are numbered from `first_request_id` (each process its own range, so two
        never send the same id in the one session).

        Raises LocalProtocolViolation (a server, a connection that has sent anything, a
        `result` that is not an InitializeResult or names a revision we do not speak),
        ConnectionClosed.
        """
        if not self._allows(Step.RESUME):
            self._refuse("resume is for a new client connection")
        problem = check_initialize_result(result)
        if problem is not None:
            raise LocalProtocolViolation(problem)
        version: str = result["protocolVersion"]
        if version not in self.config.versions:
            raise LocalProtocolViolation(f"{version} is not a handshake revision we speak")
        self.era = HandshakeEra("client", version, self.config.capabilities)
        self.peer_info = result["serverInfo"]
        self.peer_capabilities = result["capabilities"]
        instructions = result.get("instructions")
        self.instructions = instructions if type(instructions) is str else None
        self._outbound.next_id = first_request_id
        self._move(Step.RESUME)

    # -- restoring (server) ----------------------------------------------------------------------

    def restore(self, snapshot: SessionSnapshot, *, first_request_id: int = 1) -> None:
        """Server: go on serving a handshake-era session agreed earlier (by another worker
        sharing its sessions): READY at `snapshot.version`, with the client's capabilities and
        info, as if this connection had answered its `initialize` and seen `initialized`. The
        capabilities we serve by are our configuration's now. Our requests to the client are
        numbered from `first_request_id` (each worker's copy of a session its own range).

        Raises LocalProtocolViolation (a client, a connection that has received anything, or a
        revision we do not speak in the handshake era), ConnectionClosed.
        """
        if not self._allows(Step.RESTORE):
            self._refuse("restore is for a new server connection")
        rules = self._rules()
        if snapshot.version not in rules.config.versions:
            raise LocalProtocolViolation(f"{snapshot.version} is not a handshake revision we speak")
        self.config = rules.config
        self.era = HandshakeEra("server", snapshot.version, rules.config.capabilities)
        self.peer_info = snapshot.info
        self.peer_capabilities = snapshot.capabilities
        self._outbound.next_id = first_request_id
        self._move(Step.RESTORE)
        self._initialized_due = True

    def end_handshake(self) -> list[Event]:
        """Server: the client's `initialized` arrived, here or at another process serving this
        session (which told us as data, not as a message): READY. The `Initialized` event when
        this ended the handshake (`again` for a connection restored READY, which learns here
        that the client ended it); [] when there was none to end."""
        again = False
        if not self._move(Step.RECEIVE_INITIALIZED):
            if not self._initialized_due:
                return []
            again = True  # restored as READY: the handshake ends for the other processes
        self._initialized_due = False
        version = self.protocol_version or ""
        info, capabilities = self.peer_info or {}, self.peer_capabilities or {}
        return [Initialized(version, info, capabilities, None, {}, again)]

    # -- inbound -------------------------------------------------------------------------------

    def receive(self, data: bytes | str | Parsed, now: float) -> list[Event]:
        """Take in one JSON text (one stdio line, one HTTP body), or what `jsonrpc.parse` made
        of one (a transport that parsed a body to route it hands that over, parsed once)."""
        if self._state is CLOSED:
            return []
        parsed = parse(data) if isinstance(data, (bytes, str)) else data
        events: list[Event] = []
        if isinstance(parsed, list):
            self._receive_batch(parsed, now, events)
        else:
            self._receive_one(parsed, now, events, None)
        return events

    def _receive_one(
        self, msg: Message | Invalid, now: float, events: list[Event], batch: Batch | None
    ) -> None:
        # By exact type, not `match`: a class pattern costs an isinstance call and more per
        # case, 1-2% of a round trip through the core (bench/core_cost.py); the message
        # classes are final, so mypy narrows each branch all the same.
        if type(msg) is Request:
            self._on_request(msg, events, batch)
        elif type(msg) is Response:
            self._on_response(msg, events)
        elif type(msg) is Notification:
            self._on_notification(msg, now, events)
        elif type(msg) is ErrorResponse:
            self._on_error_response(msg, events)
        else:
            if msg.reply:
                error = encode_error(msg.id, msg.code, msg.message)
                self._reply(answer(error, msg.id, msg.code), batch)
            events.append(MessageRejected(msg.code, msg.message, msg.id, msg.text))

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
        request_id, method, params = msg.id, msg.method, msg.params
        if request_id in self._inbound:
            message = f"Invalid Request: id {request_id!r} is already used by a request in flight"
            self._reject(request_id, INVALID_REQUEST, message, events, batch)
            return
        if self._server:
            if method == "initialize":
                self._on_initialize(msg, events, batch)
                return
            meta = None if params is None else params.get("_meta")
            if type(meta) is dict and _ENVELOPE_KEY in meta:
                self._on_per_request(msg, meta, events, batch)
                return
        if method == "ping":  # allowed in every state, answered here
            self._reply(answer(encode_result(request_id, {}), request_id), batch)
            return
        era = self.era
        if era is None or not self._serving:
            self._reject_early(request_id, method, events, batch)
            return
        if method not in era.served:
            self._reject(request_id, METHOD_NOT_FOUND, f"Method not found: {method}", events, batch)
            return
        token = progress_token(params)
        self._accept(Inbound(request_id, method, token, era.version, batch=batch), params, events)

    def _accept(self, entry: Inbound, params: JSONObject | None, events: list[Event]) -> None:
        limit = self.config.max_in_flight
        if limit is not None and len(self._inbound) >= limit:
            message = f"Server busy: {limit} requests of this connection are already in flight"
            self._reject(entry.id, SERVER_ERROR, message, events, entry.batch)
            return
        self._inbound[entry.id] = entry
        if entry.batch is not None:
            entry.batch.waiting.add(entry.id)
        token = entry.progress_token
        events.append(RequestReceived(entry.id, entry.method, params, token, entry.envelope))

    def _reject_early(
        self, request_id: RequestId, method: str, events: list[Event], batch: Batch | None
    ) -> None:
        if self._server and self._state is NEW:
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

    def _on_per_request(
        self, msg: Request, meta: JSONObject, events: list[Event], batch: Batch | None
    ) -> None:
        """A 2026-07-28 request: checked and served on its own, whatever the connection's era."""
        rules = self._rules()
        try:
            accepted = rules.accept_per_request(msg, rules.envelope(meta), batch)
        except ProtocolError as exc:
            self._reply(refusal(msg.id, exc), batch)
            events.append(MessageRejected(exc.code, exc.message, msg.id))
            return
        match accepted:
            case Inbound():
                self._accept(accepted, msg.params, events)
            case Outgoing():
                self._reply(accepted, batch)

    def _on_initialize(self, msg: Request, events: list[Event], batch: Batch | None) -> None:
        if not self._allows(Step.RECEIVE_INITIALIZE):
            message = "Invalid Request: initialize was already received on this connection"
            self._reject(msg.id, INVALID_REQUEST, message, events, batch)
            return
        rules = self._rules()
        try:
            version, result = rules.initialize(msg.params)
        except ProtocolError as exc:
            self._reject(msg.id, exc.code, exc.message, events, batch)
            return
        params = msg.params
        assert params is not None  # checked by rules.initialize
        self.config = rules.config  # what we declared is what this session lives by
        self.era = HandshakeEra("server", version, rules.config.capabilities)
        self.peer_info = params["clientInfo"]
        self.peer_capabilities = params["capabilities"]
        self._move(Step.RECEIVE_INITIALIZE)
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
            # Ends a server's handshake; anywhere else the table has no such step: ignored.
            events += self.end_handshake()
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
        progress = _number(params.get("progress"))
        if not is_valid_id(token) or progress is None:
            return
        found = self._outbound.by_token(token)
        if found is None:
            return
        request_id, entry = found
        if entry.last_progress is not None and progress <= entry.last_progress:
            return  # progress must increase; a stale or repeated value is dropped
        entry.last_progress = progress
        self._outbound.progressed(request_id, now)
        message = params.get("message")
        total = _number(params.get("total"))
        text = message if type(message) is str else None
        events.append(ProgressReceived(request_id, progress, total, text))

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
            # Refused: nothing was agreed, the connection is as before the handshake (a probe
            # sent before it may still be answered; see client/era.py).
            self._move(Step.INITIALIZE_REFUSED)
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
        era = self.era
        if era is None or not self._sending or method not in era.allowed:
            self._check_request(method, era)
        version = None
        if type(era) is PerRequestEra:
            params = stamp(params, era.meta)
            version = era.version
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
        out = Outgoing(data, related_id, False, None, version, method, request_id, params)
        self._outbox.append(out)
        return request_id

    def _check_request(self, method: str, era: Era | None) -> None:
        """The rules for sending `method` now; once they pass in an era's READY state, the
        era remembers it (its revision and the peer's capabilities are fixed)."""
        if self._state is CLOSED:
            raise ConnectionClosed("the connection is closed")
        if method == "initialize":
            raise LocalProtocolViolation("initialize is sent by start_initialize(), by a client")
        if method == "ping" and type(era) is not PerRequestEra:
            return
        if era is None or not self._sending:
            raise LocalProtocolViolation(
                f"cannot send {method} before initialization completes; only ping is allowed"
            )
        info = self._outbound_info(method, era)
        if info is not None:
            if info.kind != "request":
                raise LocalProtocolViolation(f"{method} is a notification, not a request")
            # Per request with nothing discovered, the server's answer tells.
            if type(era) is HandshakeEra or self.peer_capabilities is not None:
                missing = undeclared(info, self.peer_capabilities, era.version)
                if missing is not None:
                    peer = "server" if self.role == "client" else "client"
                    raise CapabilityNotDeclared(method, missing, peer)
        era.allowed.add(method)

    def _outbound_info(self, method: str, era: Era) -> MethodInfo | None:
        """Registry entry for a method we send; None for methods outside the spec (extensions).

        Raises LocalProtocolViolation for a spec method we may not send at the era's revision.
        """
        info = outbound_methods(self.role, era.version).get(method)
        if info is None and type(era) is PerRequestEra and method in tasks.PER_REQUEST_TASK_METHODS:
            return None  # the tasks extension (2026-07-28): not in the core registry
        if info is None and method in METHODS:
            raise LocalProtocolViolation(
                f"a {self.role} cannot send {method} at protocol revision {era.version}"
            )
        return info

    def send_notification(
        self, method: str, params: JSONObject | None = None, *, related_id: RequestId | None = None
    ) -> None:
        """Queue a notification. Raises like `send_request`; capabilities checked are our own."""
        if self._state is CLOSED:
            raise ConnectionClosed("the connection is closed")
        if method in _RESERVED_NOTIFICATIONS:
            raise LocalProtocolViolation(f"{method} is sent by the connection itself")
        related = None if related_id is None else self._inbound.get(related_id)
        if related is not None and related.envelope is not None:
            self._outbox.append(related.notification(method, params))
            return
        # A server may log while the client has not yet said initialized.
        early_log = (
            self._server and self._state is INITIALIZING and method == "notifications/message"
        )
        era = self.era
        if era is None or not (self._sending or early_log):
            raise LocalProtocolViolation(f"cannot send {method} before initialization completes")
        info = self._outbound_info(method, era)
        missing = None if info is None else undeclared(info, self.config.capabilities, era.version)
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
            return
        done = entry.batch.add(out.data, entry.id)
        if done is not None:
            self._outbox.append(done)

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
                self._move(Step.INITIALIZE_FAILED)
                events.append(InitializeFailed(RequestTimeout("initialize", limit)))
                continue
            self.cancel(request_id, f"timed out after {limit:g} s")
            events.append(RequestTimedOut(request_id, entry.method, limit))
        return events

    def connection_lost(self) -> list[tuple[RequestId, str]]:
        """The transport is gone. Returns our pending requests (id, method), now failed."""
        self._move(Step.LOST)
        self._inbound.clear()
        return self._outbound.clear()


def _fixed(rules: ServerRules) -> Callable[[], ServerRules]:
    return lambda: rules


def _no_rules() -> ServerRules:
    raise LocalProtocolViolation("a client connection serves no requests by server rules")


def _number(value: object) -> float | None:
    """`value` when it is a JSON number (bool is not one here)."""
    if type(value) is int or type(value) is float:
        return value
    return None
