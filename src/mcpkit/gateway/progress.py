"""Progress and log messages from upstream, relayed to the downstream request they serve."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from mcpkit.errors import LocalProtocolViolation, MCPError
from mcpkit.gateway.wire import progress_token
from mcpkit.runtime import ProgressCallback
from mcpkit.server import Context

logger = logging.getLogger("mcpkit.gateway")


def progress_relay(ctx: Context) -> ProgressCallback | None:
    """The upstream request's progress callback: reports to `ctx`'s request (None: it did
    not ask for progress)."""
    if progress_token(ctx.params) is None:
        return None
    peer, request_id = ctx.peer, ctx.request_id

    def relay(progress: float, total: float | None, message: str | None) -> None:
        try:
            peer.report_progress(request_id, progress, total, message)
        except LocalProtocolViolation as exc:  # the upstream's progress did not increase
            logger.debug("upstream progress not relayed: %s", exc)

    return relay


def log_relay(ctx: Context) -> Callable[[dict[str, Any] | None], None]:
    """Where an upstream session's log messages for `ctx`'s request go: that request's
    stream (2026-07-28: notifications/message is request-scoped)."""
    peer, request_id = ctx.peer, ctx.request_id

    def relay(params: dict[str, Any] | None) -> None:
        try:
            peer.notify("notifications/message", params, related_id=request_id)
        except MCPError as exc:  # the request was answered, or its stream is gone
            logger.debug("upstream log message not relayed: %s", exc)

    return relay
