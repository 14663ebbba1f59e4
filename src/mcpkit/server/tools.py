"""Tools: a Python function, its schema, and the call path from wire arguments to a result."""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from mcpkit.errors import INVALID_PARAMS, InvalidParams, ProtocolError
from mcpkit.server.context import Context
from mcpkit.server.pagination import Paginator
from mcpkit.server.registry import Registry
from mcpkit.server.results import error_result, to_call_tool_result
from mcpkit.server.schema import Signature, context_parameter, describe, summary

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
        self.context_parameter = context_parameter(fn)
        skip = frozenset() if self.context_parameter is None else {self.context_parameter}
        self.signature: Signature = describe(fn, frozenset(skip))
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

    def call(self, arguments: JSONObject, ctx: Context) -> JSONObject | Awaitable[JSONObject]:
        """Validate and run. A plain dict comes back for sync tools; an awaitable for async."""
        problems = self.signature.problems(arguments)
        if problems:
            message = f"Invalid arguments for tool {self.name}: " + "; ".join(problems)
            if (ctx.protocol_version or "") >= _ARGUMENT_ERRORS_AS_RESULTS:
                return error_result(message)
            raise InvalidParams(message, {"tool": self.name, "problems": problems})
        arguments = self.signature.known(arguments)
        if self.context_parameter is not None:
            arguments = {**arguments, self.context_parameter: ctx}
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


class ToolRegistry(Registry[Tool]):
    """The server's tools and the tools/list and tools/call handlers."""

    def __init__(self, paginator: Paginator, on_change: Callable[[str], None]) -> None:
        super().__init__("tool", on_change)
        self._paginator = paginator

    def capability(self) -> JSONObject:
        return {"listChanged": True}

    def handlers(self) -> dict[str, Callable[[Context], Any]]:
        return {"tools/list": self.list_tools, "tools/call": self.call_tool}

    def list_tools(self, ctx: Context) -> Any:
        cursor = ctx.params.get("cursor")
        return self._paginator.page("tools", self.version, self.definitions(), cursor)

    def call_tool(self, ctx: Context) -> JSONObject | Awaitable[JSONObject]:
        params = ctx.params
        name = params.get("name")
        tool = self.get(name) if type(name) is str else None
        if tool is None:
            raise ProtocolError(INVALID_PARAMS, f"Unknown tool: {name}", {"name": name})
        arguments = params.get("arguments")
        if arguments is None:
            arguments = {}
        elif type(arguments) is not dict:
            raise ProtocolError(INVALID_PARAMS, "tools/call arguments must be an object")
        return tool.call(arguments, ctx)
