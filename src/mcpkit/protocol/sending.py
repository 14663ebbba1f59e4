"""What a connection says: requests, notifications, answers, progress and cancellations.

The sending half of `Connection` (a mixin: `Connection` holds the state it reads). Each call
checks the rules of the connection's state, revision and declared capabilities before
anything is queued, and queues an `Outgoing` record carrying the facts a transport routes by.
"""

from __future__ import annotations

from typing import Any

from mcpkit.errors import (
    CapabilityNotDeclared,
    ConnectionClosed,
    LocalProtocolViolation,
)
from mcpkit.protocol import tasks
from mcpkit.protocol.config import ConnectionConfig, State
from mcpkit.protocol.deadlines import Timeout
from mcpkit.protocol.jsonrpc import Prepared, RequestId, encode_request
from mcpkit.protocol.lifecycle import Role, outbound_methods
from mcpkit.protocol.modern import stamp
from mcpkit.protocol.outbound import OutboundRequests
from mcpkit.protocol.outgoing import Outgoing
from mcpkit.protocol.serving import Inbound, notification, undeclared
from mcpkit.types.methods import METHODS, MethodInfo

JSONObject = dict[str, Any]

# Notifications the connection sends itself, through dedicated calls.
_RESERVED_NOTIFICATIONS = frozenset(
    {"notifications/cancelled", "notifications/progress", "notifications/initialized"}
)


class Sending:
    """The sending calls of `Connection` (see the module docstring)."""

    # The state of `Connection` these calls read and change.
    config: ConnectionConfig
    role: Role
    state: State
    protocol_version: str | None
    peer_capabilities: JSONObject | None
    _outbox: list[Outgoing]
    _inbound: dict[RequestId, Inbound]
    _outbound: OutboundRequests
    _allowed_requests: set[str]
    _envelope: JSONObject | None

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
        if info is None and self._envelope is not None and method in tasks.MODERN_METHODS:
            return None  # the tasks extension (2026-07-28): not in the core registry
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
