"""Tools: a Python function, its schemas, and the call path from wire arguments to a result.

A `Tool` is built once at registration: the signature becomes inputSchema (see `schema`),
the return annotation outputSchema, the docstring the description and the parameters'
descriptions. A call validates the arguments (converting them to the annotated types), runs
the function, and turns its return value into a CallToolResult (see `results`).

Sync functions run inline, on the event loop, unless asked otherwise. Measured on a 2-core
machine (echo tool): inline, `Tool.call` takes about 1 us and a tools/call through an
in-process client about 46 us; in a worker thread (`asyncio.to_thread`) they take about
70-80 us and 160-170 us. Inline is right for cheap work; a function that blocks (file or
network I/O, heavy CPU) should be `async`, or be registered with `run_in_thread=True` (or
`server.tools.run_in_thread = True` for every sync tool without its own choice), so it does
not stall every other request of the connection.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import logging
import re
import traceback
import types
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, TypedDict, TypeVar, overload

from mcpkit.errors import INVALID_PARAMS, CapabilityNotDeclared, InvalidParams, ProtocolError
from mcpkit.protocol.http_headers import HeaderPaths, InvalidHeaderAnnotation, header_paths
from mcpkit.server.apps import apps_meta, tool_meta
from mcpkit.server.arguments import InvalidArguments
from mcpkit.server.asks import MISSING_CAPABILITY_META, capability_object
from mcpkit.server.context import Context, context_parameter
from mcpkit.server.docstrings import parse_docstring
from mcpkit.server.hints import caller_namespace, resolve_hints
from mcpkit.server.pagination import Paginator
from mcpkit.server.registry import Registry, deprecated, scope_set
from mcpkit.server.results import (
    STRUCTURED_SINCE,
    OutputMismatch,
    check_full_result,
    error_result,
    for_revision,
    full_result,
    structured_result,
    to_call_tool_result,
)
from mcpkit.server.schema import (
    Output,
    Signature,
    describe,
    describe_output,
)
from mcpkit.server.tasks import TaskManager, task_support

JSONObject = dict[str, Any]
F = TypeVar("F", bound=Callable[..., Any])
logger = logging.getLogger("mcpkit.server")
# Set around a call by the error-masking middleware: how a tool's exception is answered,
# (tool, exception) -> result, instead of with the exception's message (None: as usual).
failure_answer: contextvars.ContextVar[Callable[[Tool, Exception], JSONObject | None] | None] = (
    contextvars.ContextVar("failure_answer", default=None)
)

# From 2025-11-25 on, bad arguments are a tool error the model can see and fix (isError);
# earlier revisions answer with -32602.
_ARGUMENT_ERRORS_AS_RESULTS = "2025-11-25"
_LATEST = "9999-99-99"  # an unknown revision (no handshake yet) is treated as the newest
_NAME = re.compile(r"[A-Za-z0-9_.-]{1,128}")
_HINTS: dict[str, type] = {
    "title": str,
    "readOnlyHint": bool,
    "destructiveHint": bool,
    "idempotentHint": bool,
    "openWorldHint": bool,
}
_SNAKE = {re.sub(r"([A-Z])", r"_\1", key).lower(): key for key in _HINTS}
# Tool fields and the first revision that has them (older clients get definitions without).
_FIELD_SINCE = {
    "annotations": "2025-03-26",
    "title": "2025-06-18",
    "outputSchema": "2025-06-18",
    "_meta": "2025-06-18",
    "icons": "2025-11-25",
    "execution": "2025-11-25",
}
_ERAS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
_AWAITABLES = (types.CoroutineType, asyncio.Future)


class ToolOptions(TypedDict, total=False):
    """The keywords of `@server.tool(...)`, `server.add_tool(fn, ...)` and `Tool(fn, ...)`
    (what each means: see `Tool`). Typed once here so an editor completes them and mypy
    refuses a misspelt one; `Tool.__init__` spells the same keywords (a test keeps them equal).
    """

    name: str | None
    title: str | None
    description: str | None
    annotations: Any
    icons: list[Any] | None
    meta: JSONObject | None
    structured_output: bool | None
    run_in_thread: bool | None
    scopes: Iterable[str] | None
    task: bool | str | None
    task_if: Callable[[Context], bool] | None
    app: str | None
    visibility: Iterable[str] | None


class ToolDefaults:
    """Settings shared by the tools of one registry (see `ToolRegistry`)."""

    __slots__ = ("expose_tracebacks", "run_in_thread")

    def __init__(self) -> None:
        self.run_in_thread = False
        self.expose_tracebacks = False


_STANDALONE = ToolDefaults()


class Tool:
    """One registered tool.

    Options (all keyword): `name` (default: the function's name; checked against the spec's
    rules: 1-128 of A-Z a-z 0-9 _ - .), `title`, `description` (default: the docstring's
    prose), `annotations` (a dict such as {"readOnlyHint": True} — snake_case keys accepted —
    or an `mcpkit.types.ToolAnnotations`), `icons` (a list of {"src": ..., "mimeType": ...,
    "sizes": [...]} dicts or `mcpkit.types.Icon`), `meta` (the definition's `_meta`),
    `structured_output` (None: from the return annotation; False: never; True: required),
    `run_in_thread` (sync functions only; None: the registry's default), `scopes` (with
    authorization: what a caller's token must grant to call it; 403 otherwise), `task`
    (True or "optional": a call may run as a task; "required": only as a task; see
    `server.tasks`) and `task_if` (called with the Context of a call that may become a task:
    False runs it inline, where `ctx.continue_as_task()` can still make it one), `app` (MCP
    Apps: the `ui://` view its results render in) and `visibility` (who may call it:
    ["model", "app"] by default; ["app"] hides it from the model; see `mcpkit.server.apps`).

    Raises ValueError (a bad name, unknown annotation keys, a bad app URI or visibility) and
    TypeError (a signature no
    JSON Schema can describe; structured_output=True without a describable return type).
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        annotations: Any = None,
        icons: list[Any] | None = None,
        meta: JSONObject | None = None,
        structured_output: bool | None = None,
        run_in_thread: bool | None = None,
        scopes: Iterable[str] | None = None,
        task: bool | str | None = None,
        task_if: Callable[[Context], bool] | None = None,
        app: str | None = None,
        visibility: Iterable[str] | None = None,
    ) -> None:
        self.fn = fn
        meta = tool_meta(meta, app, visibility)
        self.scopes = scope_set(scopes)
        self.task_support = task_support(task)
        if task_if is not None and self.task_support is None:
            raise ValueError("task_if= decides when a call becomes a task: it needs task=")
        self.task_if = task_if
        if name is None:
            name = getattr(fn, "__name__", type(fn).__name__)
        self.name = check_tool_name(name)
        hints = resolve_hints(fn, caller_namespace(), kind="tool")
        self.context_parameter = context_parameter(fn, hints)
        prose, docs = parse_docstring(inspect.getdoc(fn))
        skip = frozenset() if self.context_parameter is None else {self.context_parameter}
        self.signature: Signature = describe(fn, frozenset(skip), hints=hints, docs=docs)
        try:  # Header("Name") parameters: mirrored into Mcp-Param-* on 2026-07-28 HTTP
            self.header_paths: HeaderPaths = header_paths(self.signature.input_schema)
        except InvalidHeaderAnnotation as exc:
            raise ValueError(f"tool {self.name!r}: {exc}") from None
        self.output: Output | None = None
        if structured_output is not False:
            returns = hints.get("return", inspect.Parameter.empty)
            required = structured_output is True
            self.output = describe_output(returns, self.name, required=required)
        self.is_async = inspect.iscoroutinefunction(fn) or (
            not inspect.isroutine(fn) and inspect.iscoroutinefunction(type(fn).__call__)
        )
        if run_in_thread and self.is_async:
            raise ValueError(f"tool {self.name!r} is async; run_in_thread is for sync functions")
        self.run_in_thread = run_in_thread
        self.defaults = _STANDALONE
        self.definition = self._definition(
            title, description if description is not None else prose, annotations, icons, meta
        )

    def _definition(
        self,
        title: str | None,
        description: str | None,
        annotations: Any,
        icons: list[Any] | None,
        meta: JSONObject | None,
    ) -> JSONObject:
        definition: JSONObject = {"name": self.name}
        if title is not None:
            definition["title"] = title
        if description:
            definition["description"] = description
        definition["inputSchema"] = self.signature.input_schema
        if self.output is not None:
            definition["outputSchema"] = self.output.schema
        if annotations is not None:
            definition["annotations"] = tool_annotations(annotations)
        if icons is not None:
            definition["icons"] = tool_icons(icons)
        if meta is not None:
            definition["_meta"] = dict(meta)
        if self.task_support is not None:
            definition["execution"] = {"taskSupport": self.task_support}
        return definition

    # -- calling -------------------------------------------------------------------------------

    def call(self, arguments: JSONObject, ctx: Context) -> JSONObject | Awaitable[JSONObject]:
        """Validate and run. A plain dict comes back for inline calls; an awaitable otherwise.

        Raises ProtocolError: -32602 for invalid arguments before protocol 2025-11-25 (from
        then on they are a tool error), or whatever ProtocolError the function raised.
        """
        try:
            kwargs = self.signature.bind(arguments)
        except InvalidArguments as exc:
            return self._invalid(exc.problems, ctx)
        if self.context_parameter is not None:
            kwargs = {**kwargs, self.context_parameter: ctx}
        threaded = self.run_in_thread
        if self.is_async or threaded or (threaded is None and self.defaults.run_in_thread):
            return self._call_async(kwargs, ctx)
        try:
            value = self.fn(**kwargs)
        except ProtocolError:
            raise
        except Exception as exc:
            return self._failure(exc)
        if type(value) is str and self.output is None:  # the common case, valid at any revision
            return {"content": [{"type": "text", "text": value}], "isError": False}
        if isinstance(value, _AWAITABLES):  # a sync wrapper around a coroutine function
            return self._finish(value, ctx)
        return self._result(value, ctx)

    async def _call_async(self, kwargs: JSONObject, ctx: Context) -> JSONObject:
        """An async function, or a sync one in a worker thread."""
        try:
            fn = self.fn
            awaitable = fn(**kwargs) if self.is_async else asyncio.to_thread(fn, **kwargs)
        except ProtocolError:
            raise
        except Exception as exc:
            return self._failure(exc)
        return await self._finish(awaitable, ctx)

    async def _finish(self, awaitable: Awaitable[Any], ctx: Context) -> JSONObject:
        try:
            value = await awaitable
        except ProtocolError:
            raise
        except Exception as exc:
            return self._failure(exc)
        return self._result(value, ctx)

    def _result(self, value: Any, ctx: Context) -> JSONObject:
        output = self.output
        try:
            if output is None:
                result = to_call_tool_result(value)
            elif type(value) is not str and type(value).__name__ == "CallToolResult":
                result = full_result(value) or {}
                check_full_result(result, output)
            else:
                result = structured_result(value, output)
        except OutputMismatch as exc:
            logger.warning(
                "tool %s: return value does not match its outputSchema: %s", self.name, exc
            )
            return error_result(
                f"Tool {self.name} returned a value that does not match its output schema: {exc}"
            )
        except Exception as exc:
            return self._failure(exc)
        revision = ctx.protocol_version
        if revision is not None and revision < STRUCTURED_SINCE:
            return for_revision(result, revision)
        return result

    def _invalid(self, problems: list[str], ctx: Context) -> JSONObject:
        message = f"Invalid arguments for tool {self.name}: " + "; ".join(problems)
        if (ctx.protocol_version or _LATEST) >= _ARGUMENT_ERRORS_AS_RESULTS:
            return error_result(message)
        raise InvalidParams(message, {"tool": self.name, "problems": problems})

    def _failure(self, exc: Exception) -> JSONObject:
        # The message reaches the model; the traceback stays in the server's log unless the
        # registry exposes tracebacks.
        answer = failure_answer.get()
        masked = None if answer is None else answer(self, exc)
        if masked is not None:
            return masked
        logger.info("tool %s raised", self.name, exc_info=exc)
        message = str(exc) or type(exc).__name__
        if self.defaults.expose_tracebacks:
            message += "\n\n" + "".join(traceback.format_exception(exc))
        result = error_result(message)
        if isinstance(exc, CapabilityNotDeclared):  # the client's (handshake era)
            result["_meta"] = {MISSING_CAPABILITY_META: capability_object(exc.capability)}
        return result

    def __repr__(self) -> str:
        return f"Tool({self.name!r})"


# -- checking definitions ---------------------------------------------------------------------


def check_tool_name(name: str) -> str:
    """Return `name` if it follows the spec's guidance (2025-11-25 "Tool names"): 1 to 128
    characters among A-Z, a-z, 0-9, underscore, hyphen and dot. Raises ValueError."""
    if type(name) is str and _NAME.fullmatch(name):
        return name
    if not name:
        problem = "it is empty"
    elif len(name) > 128:
        problem = f"it is {len(name)} characters long (at most 128)"
    else:
        bad = sorted({c for c in name if not _NAME.fullmatch(c)})
        problem = "it contains " + ", ".join(repr(c) for c in bad)
    raise ValueError(
        f"invalid tool name {name!r}: {problem}; use 1-128 of A-Z a-z 0-9 _ - . "
        "(pass name=... to choose another)"
    )


def tool_annotations(value: Any) -> JSONObject:
    """The wire form of tool annotations. Raises ValueError for unknown keys or wrong types."""
    value = _wire(value)
    if not isinstance(value, dict):
        raise TypeError("annotations must be a dict or an mcpkit.types.ToolAnnotations")
    found: JSONObject = {}
    for key, hint in value.items():
        wire = _SNAKE.get(key, key)
        if wire not in _HINTS:
            raise ValueError(f"unknown tool annotation {key!r}; known: {', '.join(_HINTS)}")
        if hint is None:
            continue
        if type(hint) is not _HINTS[wire]:
            raise ValueError(f"tool annotation {wire} must be a {_HINTS[wire].__name__}")
        found[wire] = hint
    return found


def tool_icons(icons: list[Any]) -> list[JSONObject]:
    """The wire form of icons. Raises ValueError for an icon without a string `src`."""
    found = []
    for given in icons:
        icon = _wire(given)
        if not isinstance(icon, dict) or type(icon.get("src")) is not str:
            raise ValueError(f"an icon needs a string 'src' (got {given!r})")
        found.append(dict(icon))
    return found


def _wire(value: Any) -> Any:
    if hasattr(value, "to_wire"):
        return value.to_wire()
    if hasattr(value, "model_dump"):
        return value.model_dump(by_alias=True, exclude_none=True)
    return value


def definition_for(definition: JSONObject, revision: str) -> JSONObject:
    """A tool definition as `revision` knows tools: fields it does not have are left out (a
    title moves into annotations.title where that exists)."""
    older = {k: v for k, v in definition.items() if _FIELD_SINCE.get(k, "") <= revision}
    if "_meta" not in older and (kept := apps_meta(definition.get("_meta"))):
        older["_meta"] = kept  # MCP Apps, negotiated at every revision: a host needs it
    title = definition.get("title")
    if title is not None and "title" not in older and revision >= _FIELD_SINCE["annotations"]:
        older["annotations"] = {"title": title, **older.get("annotations", {})}
    return older


# -- the registry -----------------------------------------------------------------------------


class ToolRegistry(Registry[Tool]):
    """The server's tools and the tools/list and tools/call handlers.

    `run_in_thread`: run sync tools in a worker thread unless a tool says otherwise
    (default False: inline). `expose_tracebacks`: append the traceback to the message of a
    tool that raised (default False; for development).
    """

    def __init__(self, paginator: Paginator, on_change: Callable[[str], None]) -> None:
        super().__init__("tool", on_change)
        self._paginator = paginator
        self.defaults = ToolDefaults()
        # Older revisions' definitions: revision era -> (registry version, items, pages).
        self._older: dict[str, tuple[int, list[JSONObject], Paginator]] = {}
        self.tasks: TaskManager | None = None  # the server's, for tools with task=
        self.task_capable = False  # some tool may run as a task

    @property
    def run_in_thread(self) -> bool:
        return self.defaults.run_in_thread

    @run_in_thread.setter
    def run_in_thread(self, value: bool) -> None:
        self.defaults.run_in_thread = value

    @property
    def expose_tracebacks(self) -> bool:
        return self.defaults.expose_tracebacks

    @expose_tracebacks.setter
    def expose_tracebacks(self, value: bool) -> None:
        self.defaults.expose_tracebacks = value

    def _put(self, name: str, item: Tool, *, replace: bool = False) -> Tool:
        item.defaults = self.defaults
        if item.task_support is not None:
            self.task_capable = True  # before the change hook makes the new capabilities
        return super()._put(name, item, replace=replace)

    def apply(self, removed: Iterable[str], added: dict[str, Tool]) -> None:
        for item in added.values():
            item.defaults = self.defaults
            self.task_capable = self.task_capable or item.task_support is not None
        super().apply(removed, added)

    def add(self, fn: Callable[..., Any], **options: Any) -> Tool:
        """Deprecated: `server.add_tool(fn, ...)`."""
        deprecated("server.tools.add()", "server.add_tool()")
        tool = Tool(fn, **options)
        return self._put(tool.name, tool)

    @overload
    def decorator(self, name: F, /) -> F: ...

    @overload
    def decorator(self, name: str | None = None, **options: Any) -> Callable[[F], F]: ...

    def decorator(self, name: str | F | None = None, **options: Any) -> F | Callable[[F], F]:
        """Deprecated: `@server.tool` or `@server.tool(...)`."""
        deprecated("server.tools.decorator", "@server.tool")
        if callable(name):  # used bare: `name` is the function itself
            tool = Tool(name, **options)
            self._put(tool.name, tool)
            return name

        def register(fn: F) -> F:
            tool = Tool(fn, name=name, **options)
            self._put(tool.name, tool)
            return fn

        return register

    def capability(self) -> JSONObject:
        return {"listChanged": True}

    def ordered(self) -> list[Tool]:
        """The tools sorted by name.

        tools/list answers in this order in every era: the same set of tools gives the same
        list whatever order they were registered in (on every replica of a server), which
        keeps clients' caches and LLM prompt caches warm.
        """
        return sorted(self._items.values(), key=lambda tool: tool.name)

    def handlers(self) -> dict[str, Callable[[Context], Any]]:
        return {"tools/list": self.list_tools, "tools/call": self.call_tool}

    def header_paths(self, name: str) -> HeaderPaths | None:
        """The Mcp-Param headers a 2026-07-28 HTTP tools/call of `name` must carry."""
        tool = self._items.get(name)
        return tool.header_paths if tool is not None and tool.header_paths else None

    def list_tools(self, ctx: Context) -> Any:
        cursor = ctx.params.get("cursor")
        era = next((e for e in _ERAS if e <= (ctx.protocol_version or _LATEST)), _ERAS[-1])
        if era == _ERAS[0]:
            view, shown = self.view_for(ctx.principal)
            return self._paginator.page("tools", self.version, shown, cursor, view)
        cached = self._older.get(era)
        if cached is None or cached[0] != self.version:
            items = [definition_for(d, era) for d in self.definitions()]
            pages = cached[2] if cached else Paginator(self._paginator.page_size)
            cached = self._older[era] = (self.version, items, pages)
        view, shown = self.view_for(ctx.principal, cached[1])
        return cached[2].page("tools", self.version, shown, cursor, view)

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
        tasks = self.tasks
        # A task tool, or a task asked for (2025-11-25) of a server that has task tools.
        if tasks is not None and (
            tool.task_support is not None
            or (self.task_capable and "task" in params and ctx.envelope is None)
        ):
            return tasks.call_tool(
                ctx, tool.name, tool.task_support, tool.task_if, lambda c: tool.call(arguments, c)
            )
        return tool.call(arguments, ctx)
