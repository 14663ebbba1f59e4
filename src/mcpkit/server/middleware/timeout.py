"""`ToolTimeout`: a tool call that takes longer than its bound ends with a tool error."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from mcpkit.server.middleware.base import CallNext, Middleware, MiddlewareContext
from mcpkit.server.results import error_result

__all__ = ["ToolTimeout"]


class ToolTimeout(Middleware):
    """Bound how long a tools/call may take: `seconds` for every tool (None: no default
    bound), `per_tool` by tool name (None there: that tool unbounded).

    A call past its bound is cancelled and answered with the tool error (isError) "Tool T
    timed out after N s", which the model can read and act on. What can be cancelled is
    what awaits: async tools, and the wait for a tool run in a thread (the thread itself runs
    on; Python cannot stop it). A sync tool run inline blocks the event loop and cannot be
    interrupted: give it `run_in_thread=True`.

    Raises ValueError for a bound that is not a positive number.
    """

    def __init__(
        self, seconds: float | None = None, *, per_tool: Mapping[str, float | None] = {}
    ) -> None:
        for bound in (seconds, *per_tool.values()):
            if bound is not None and not bound > 0:
                raise ValueError(f"a timeout is a positive number of seconds, not {bound!r}")
        self.seconds = seconds
        self.per_tool = dict(per_tool)

    async def on_call_tool(self, mctx: MiddlewareContext, call_next: CallNext) -> Any:
        name = mctx.name or ""
        bound = self.per_tool.get(name, self.seconds)
        if bound is None:
            return await call_next(mctx)
        try:
            async with asyncio.timeout(bound) as scope:
                return await call_next(mctx)
        except TimeoutError:
            if not scope.expired():
                raise  # the tool's own TimeoutError, not ours
            return error_result(f"Tool {name} timed out after {bound:g} s")
