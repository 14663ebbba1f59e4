"""`ErrorMasking`: an unexpected exception reaches the client as a generic error with an id;
its detail (message, traceback) goes to the server's log under that id only."""

from __future__ import annotations

import logging
import secrets
from typing import Any

from mcpkit.errors import ProtocolError
from mcpkit.server.middleware.base import CallNext, Middleware, MiddlewareContext
from mcpkit.server.results import error_result
from mcpkit.server.tools import failure_answer

__all__ = ["ErrorMasking"]

INTERNAL_ERROR = -32603


class ErrorMasking(Middleware):
    """Mask unexpected exceptions, and log them with an id the client is given.

    - A handler (or an inner middleware) raising anything but `ProtocolError` is answered
      -32603 "Internal error (error id X)", `data: {"errorId": X}`.
    - A tool raising anything but `ProtocolError` gives the tool error (isError) "Tool T
      failed (error id X)" instead of the exception's message, which may hold paths, SQL or
      secrets. A tool that wants the model to read its message returns an error result itself
      (`CallToolResult(isError=True, ...)`) or raises `ProtocolError`.

    `logger` (default "mcpkit.errors") gets one ERROR line with the traceback per masked
    exception. Add it first (outermost), so it also masks the other middleware's failures.
    """

    def __init__(self, logger: logging.Logger | None = None) -> None:
        self.logger = logger or logging.getLogger("mcpkit.errors")

    async def on_request(self, mctx: MiddlewareContext, call_next: CallNext) -> Any:
        token = failure_answer.set(self._tool_failed) if mctx.method == "tools/call" else None
        try:
            return await call_next(mctx)
        except ProtocolError:
            raise
        except Exception as exc:
            error_id = self._log(f"{mctx.method} failed", exc)
            raise ProtocolError(
                INTERNAL_ERROR, f"Internal error (error id {error_id})", {"errorId": error_id}
            ) from None
        finally:
            if token is not None:
                failure_answer.reset(token)

    def _tool_failed(self, name: str, exc: Exception) -> dict[str, Any]:
        error_id = self._log(f"tool {name} raised", exc)
        return error_result(f"Tool {name} failed (error id {error_id})")

    def _log(self, what: str, exc: Exception) -> str:
        error_id = secrets.token_hex(6)
        self.logger.error("%s [error id %s]", what, error_id, exc_info=exc)
        return error_id
