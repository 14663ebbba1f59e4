"""`ErrorMasking`: an unexpected exception reaches the client as a generic error with an id;
its detail (message, traceback) goes to the server's log under that id only."""

from __future__ import annotations

import logging
import secrets
from functools import partial
from typing import Any

from mcpkit.errors import ProtocolError
from mcpkit.server.middleware.base import CallNext, Middleware, MiddlewareContext
from mcpkit.server.results import error_result
from mcpkit.server.tools import Tool, failure_answer

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
        token = None
        if mctx.method == "tools/call":
            token = failure_answer.set(partial(self._tool_failed, _tool_settings(mctx.server)))
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

    def _tool_failed(self, ours: list[Any], tool: Tool, exc: Exception) -> dict[str, Any] | None:
        if not any(tool.defaults is settings for settings in ours):
            return None  # another server's tool, run in this task (one served in memory)
        error_id = self._log(f"tool {tool.name} raised", exc)
        return error_result(f"Tool {tool.name} failed (error id {error_id})")

    def _log(self, what: str, exc: Exception) -> str:
        error_id = secrets.token_hex(6)
        self.logger.error("%s [error id %s]", what, error_id, exc_info=exc)
        return error_id


def _tool_settings(server: Any) -> list[Any]:
    """The tool settings (`ToolDefaults`) of `server` and of the servers mounted in it: what
    identifies a tool as served by it."""
    found = [server.tools.defaults]
    for mount in getattr(server, "_mounts", ()):
        found += _tool_settings(mount.child)
    return found
