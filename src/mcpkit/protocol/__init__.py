"""The sans-IO MCP core: bytes and time in, events and bytes out; no asyncio, sockets or clock."""

from mcpkit.protocol.config import ConnectionConfig
from mcpkit.protocol.connection import Connection, State
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
from mcpkit.protocol.jsonrpc import Parsed, Prepared, RequestId
from mcpkit.protocol.outgoing import Outgoing
from mcpkit.protocol.serving import ServerRules

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
    "Parsed",
    "Prepared",
    "ProgressReceived",
    "RequestCancelled",
    "RequestId",
    "RequestReceived",
    "RequestTimedOut",
    "ResponseReceived",
    "ServerRules",
    "State",
    "Timeout",
]
