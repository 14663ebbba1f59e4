"""Logging to the client: logging/setLevel, and Python `logging` records forwarded.

A client that never called logging/setLevel gets no log messages. Records of the server's
own logger (`server.logger`) at or above a client's level go to that client, mapped from
Python levels to the syslog-style levels MCP uses.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any

from mcpkit.errors import InvalidParams
from mcpkit.protocol.per_request import LOG_LEVELS
from mcpkit.protocol.snapshot import LogLevelSet
from mcpkit.runtime import Session
from mcpkit.server.context import Context, LogLevel, SessionState


def set_level(ctx: Context) -> dict[str, Any]:
    level = ctx.params.get("level")
    if level not in LOG_LEVELS:
        raise InvalidParams(f"Invalid log level {level!r}; expected one of {', '.join(LOG_LEVELS)}")
    session = ctx.peer
    if isinstance(session, Session):  # without a session there is nothing to remember it in
        change = LogLevelSet(level)
        session.state.apply(change)
        session.changed(change, ctx.request_id)
    return {}


def mcp_level(levelno: int) -> LogLevel:
    if levelno >= logging.CRITICAL:
        return "critical"
    if levelno >= logging.ERROR:
        return "error"
    if levelno >= logging.WARNING:
        return "warning"
    if levelno >= logging.INFO:
        return "info"
    return "debug"


class ClientLogHandler(logging.Handler):
    """Sends the server logger's records to every client that asked for their level."""

    def __init__(self, sessions: Callable[[], Iterable[Session]]) -> None:
        super().__init__()
        self._sessions = sessions

    def emit(self, record: logging.LogRecord) -> None:
        level = mcp_level(record.levelno)
        params = None
        for session in self._sessions():
            state: SessionState = session.state
            if not state.wants_log(level):
                continue
            if params is None:
                params = {"level": level, "logger": record.name, "data": self.format(record)}
            try:
                session.notify("notifications/message", params)
            except Exception:  # a closing session must not break the caller's logging
                self.handleError(record)
