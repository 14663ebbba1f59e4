"""The asyncio runtime: a pump loop, futures and handler tasks around the sans-IO core."""

from mcpkit.runtime.session import NotificationHandler, ProgressCallback, RequestHandler, Session
from mcpkit.runtime.transport import MessageTransport

__all__ = [
    "MessageTransport",
    "NotificationHandler",
    "ProgressCallback",
    "RequestHandler",
    "Session",
]
