"""How a handler's outcome becomes an answer, the same way for sessions and sessionless requests.

A handler returns a result dict (or a `Prepared` one) for an inline answer, or an awaitable
that runs in a task of its own (so the peer can cancel it). An exception becomes an error
answer: a `ProtocolError` keeps its code; a `CapabilityNotDeclared` (the handler asked the
peer for something it did not declare) is an internal error naming the capability; anything
else is logged and answered with a bare internal error, so no traceback or internal detail
reaches the peer.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from mcpkit.errors import INTERNAL_ERROR, CapabilityNotDeclared, ProtocolError
from mcpkit.protocol import Prepared, RequestReceived

if TYPE_CHECKING:
    from mcpkit.runtime.peer import Peer

JSONObject = dict[str, Any]
Outcome = JSONObject | Prepared | Awaitable[JSONObject | Prepared]
RequestHandler = Callable[["Peer", RequestReceived], Outcome]

logger = logging.getLogger("mcpkit.runtime")


def failure(method: str, exc: Exception) -> tuple[int, str, Any]:
    """The error answer (code, message, data) for a handler of `method` that raised `exc`."""
    if isinstance(exc, ProtocolError):
        return exc.code, exc.message, exc.data
    if isinstance(exc, CapabilityNotDeclared):
        return INTERNAL_ERROR, f"Internal error: {exc}", None
    logger.error("handler for %s failed", method, exc_info=exc)
    return INTERNAL_ERROR, "Internal error", None


def is_inline(outcome: Outcome) -> bool:
    """Whether a handler's outcome is its result already (no task needed)."""
    kind = type(outcome)
    return kind is dict or kind is Prepared
