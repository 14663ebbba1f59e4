"""What `TaskHandle.result()` returns: the tool's `CallToolResult`, a model as `call_tool`'s.

Before issue 23 it returned the wire dict. For one release the model still answers the reads
code did then (`result["content"]`, `.get(...)`, `"isError" in result`), each with a
DeprecationWarning naming the attribute to read instead (`DictReads`). Imported on the first
result: it needs pydantic, which a client that never follows a task does not load.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from mcpkit.client.handlers import validation_summary
from mcpkit.errors import InvalidResult
from mcpkit.types import CallToolResult
from mcpkit.types.deprecation import DictReads


class ToolTaskResult(DictReads, CallToolResult):
    """A `CallToolResult` (see the module notes for the deprecated dict reads)."""


def tool_result(raw: Any, method: str) -> CallToolResult:
    """`raw` as a CallToolResult. Raises InvalidResult naming what does not fit."""
    try:
        return ToolTaskResult.from_wire(raw)
    except ValidationError as exc:
        raise InvalidResult(method, validation_summary(exc)) from None
