"""Tools: a Python function, its schema, and the call path from wire arguments to a result."""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from mcpkit.errors import InvalidParams, ProtocolError
from mcpkit.server.results import error_result, to_call_tool_result
from mcpkit.server.schema import Signature, describe, summary

JSONObject = dict[str, Any]
logger = logging.getLogger("mcpkit.server")

# From 2025-11-25 on, bad arguments are a tool error the model can see and fix (isError);
# earlier revisions answer with -32602.
_ARGUMENT_ERRORS_AS_RESULTS = "2025-11-25"


class Tool:
    """One registered tool."""

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        annotations: JSONObject | None = None,
    ) -> None:
        self.fn = fn
        self.name = name or fn.__name__
        self.signature: Signature = describe(fn)
        self.is_async = inspect.iscoroutinefunction(fn)
        definition: JSONObject = {"name": self.name, "inputSchema": self.signature.input_schema}
        if title is not None:
            definition["title"] = title
        description = description if description is not None else summary(fn)
        if description is not None:
            definition["description"] = description
        if annotations is not None:
            definition["annotations"] = annotations
        self.definition = definition

    def call(
        self, arguments: JSONObject, protocol_version: str | None
    ) -> JSONObject | Awaitable[JSONObject]:
        """Validate and run. A plain dict comes back for sync tools; an awaitable for async."""
        problems = self.signature.problems(arguments)
        if problems:
            message = f"Invalid arguments for tool {self.name}: " + "; ".join(problems)
            if (protocol_version or "") >= _ARGUMENT_ERRORS_AS_RESULTS:
                return error_result(message)
            raise InvalidParams(message, {"tool": self.name, "problems": problems})
        arguments = self.signature.known(arguments)
        if self.is_async:
            return self._call_async(arguments)
        try:
            value = self.fn(**arguments)
        except ProtocolError:
            raise
        except Exception as exc:
            return self._failure(exc)
        return to_call_tool_result(value)

    async def _call_async(self, arguments: JSONObject) -> JSONObject:
        try:
            value = await self.fn(**arguments)
        except ProtocolError:
            raise
        except Exception as exc:
            return self._failure(exc)
        return to_call_tool_result(value)

    def _failure(self, exc: Exception) -> JSONObject:
        # The message reaches the model; the traceback stays in the server's log.
        logger.info("tool %s raised", self.name, exc_info=exc)
        return error_result(str(exc) or type(exc).__name__)
