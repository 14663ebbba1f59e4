"""The sans-IO MCP core: bytes and time in, events and bytes out; no asyncio, sockets or clock."""

from mcpkit.protocol.connection import Connection, ConnectionConfig, Outgoing, State
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
from mcpkit.protocol.jsonrpc import Prepared, RequestId

__all__ = [
    "Connection",
    "ConnectionConfig",
    "ErrorReceived",
    "Event",
    "InitializeFailed",
    "Initialized",
    "MessageRejected",
    "NotificationReceived",
    "Outgoing",
    "Prepared",
    "ProgressReceived",
    "RequestCancelled",
    "RequestId",
    "RequestReceived",
    "RequestTimedOut",
    "ResponseReceived",
    "State",
    "Timeout",
]
