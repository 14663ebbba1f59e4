"""Events the connection reports after it has taken in data or time.

Each event names what happened. The I/O layer reacts: run a handler for `RequestReceived`,
resolve a future for `ResponseReceived`, cancel a task for `RequestCancelled`, and so on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcpkit.errors import MCPError, ProtocolError
from mcpkit.protocol.jsonrpc import RequestId

if TYPE_CHECKING:
    from mcpkit.protocol.per_request import Envelope

JSONObject = dict[str, Any]


@dataclass(slots=True)
class RequestReceived:
    """The peer sent a request that needs a handler; answer with `send_result`/`send_error`."""

    id: RequestId
    method: str
    params: JSONObject | None
    progress_token: str | int | None = None
    # Set for a 2026-07-28 request: its version, the client's capabilities, log level, trace.
    envelope: Envelope | None = None


@dataclass(slots=True)
class NotificationReceived:
    """A notification the connection does not consume itself (list_changed, logging, ...)."""

    method: str
    params: JSONObject | None


@dataclass(slots=True)
class ResponseReceived:
    """The answer to one of our requests."""

    id: RequestId
    method: str
    result: JSONObject


@dataclass(slots=True)
class ErrorReceived:
    """An error answer to one of our requests."""

    id: RequestId
    method: str
    error: ProtocolError


@dataclass(slots=True)
class RequestCancelled:
    """The peer cancelled a request it sent us; stop working on it. No answer will be sent."""

    id: RequestId
    reason: str | None


@dataclass(slots=True)
class ProgressReceived:
    """Progress for one of our requests."""

    request_id: RequestId
    progress: float
    total: float | None
    message: str | None


@dataclass(slots=True)
class RequestTimedOut:
    """One of our requests ran out of time; the connection queued its cancellation."""

    id: RequestId
    method: str
    timeout: float


@dataclass(slots=True)
class Initialized:
    """The handshake is complete; both sides may now use what the other declared."""

    protocol_version: str
    peer_info: JSONObject
    peer_capabilities: JSONObject
    instructions: str | None
    result: JSONObject
    # A server connection restored past its handshake (another process answered initialize)
    # received the client's initialized: nothing changes here, the other processes learn it.
    again: bool = False


@dataclass(slots=True)
class InitializeFailed:
    """The handshake failed (error answer or a version we cannot speak); close the connection."""

    error: MCPError


@dataclass(slots=True)
class MessageRejected:
    """The peer sent something malformed or out of place. Any error answer is already queued."""

    code: int
    message: str
    id: RequestId | None
    text: str | None = None  # what came, when it was not JSON at all (see jsonrpc.Invalid)


Event = (
    RequestReceived
    | NotificationReceived
    | ResponseReceived
    | ErrorReceived
    | RequestCancelled
    | ProgressReceived
    | RequestTimedOut
    | Initialized
    | InitializeFailed
    | MessageRejected
)
