"""Progress from upstream, relayed to the downstream request it serves."""

from __future__ import annotations

import logging

from mcpkit.errors import LocalProtocolViolation
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
