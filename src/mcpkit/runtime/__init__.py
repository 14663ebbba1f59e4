"""The asyncio runtime: a pump loop, futures and handler tasks around the sans-IO core."""

from mcpkit.runtime.handling import RequestHandler
from mcpkit.runtime.peer import Peer
from mcpkit.runtime.principal import Principal
from mcpkit.runtime.session import NotificationHandler, ProgressCallback, Session
from mcpkit.runtime.sessionless import RequestPeer, SessionlessServer
from mcpkit.runtime.transport import (
    Incoming,
    MessageTransport,
    PullTransport,
    PushTransport,
    Transport,
)

__all__ = [
    "Incoming",
    "MessageTransport",
    "NotificationHandler",
    "Peer",
    "Principal",
    "ProgressCallback",
    "PullTransport",
    "PushTransport",
    "RequestHandler",
    "RequestPeer",
    "Session",
    "SessionlessServer",
    "Transport",
]
