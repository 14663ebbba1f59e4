"""`Client`: connect to a server, run the handshake, call it with typed methods.

How this works: `Client(target)` resolves the target to a transport (`_targets.py`, the only
place the client reaches for one), wraps it in a runtime `Session` around a client-role
`Connection`, and runs `initialize` on `__aenter__`. The capabilities it declares follow from
what you gave it: `sampling=`, `elicitation=` and `roots=` each add theirs, nothing else does.
The server's requests go to `ServerRequests` (handlers.py), its notifications to
`Notifications` (notifications.py), and each typed method below is one MCP request whose
result is parsed into its `mcpkit.types` model.

Decisions worth knowing:

- `server_info` and `server_capabilities` are the server's JSON objects as sent (dicts):
  capabilities are an open set (experimental, extensions) and `"tools" in caps` reads well.
  For typed views: `mcpkit.types.ServerCapabilities.from_wire(client.server_capabilities)`.
- `call_tool` returns the result even when the tool reports an error (`result.is_error`), as
  the spec intends (the model should see the error). `raise_on_error=True` raises `ToolError`
  instead.
- Output validation: the client remembers every tool definition it has listed. Calling a tool
  it has not seen also lists the tools (once, concurrently with the call; again only after
  `notifications/tools/list_changed`) so that `structuredContent` is always checked against
  the tool's `outputSchema` when there is one. A mismatch raises `ToolOutputInvalid`.
- Tool annotations (`readOnlyHint`, `destructiveHint`, ...) come from an untrusted server.
  They are exposed on `Tool.annotations` for your UI and policy; this client never reads them
  and nothing it does depends on them (no confirmation, no retry).
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import AsyncIterator, Callable
from types import EllipsisType, TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

from mcpkit._version import __version__
from mcpkit.client._jsonschema import schema_errors
from mcpkit.client._targets import HttpOptions, StdioOptions, open_transport
from mcpkit.client.handlers import (
    Elicitation,
    ElicitationHandler,
    RootsSource,
    Sampling,
    SamplingHandler,
    ServerRequests,
    validation_summary,
)
from mcpkit.client.notifications import (
    ListChangedHandler,
    ListKind,
    LogHandler,
    NotificationHandler,
    Notifications,
    ResourceUpdatedHandler,
)
from mcpkit.client.pagination import DEFAULT_MAX_PAGES, items
from mcpkit.errors import (
    URL_ELICITATION_REQUIRED,
    CapabilityNotDeclared,
    InvalidResult,
    ProtocolError,
    ToolError,
    ToolOutputInvalid,
    URLElicitationRequired,
)
from mcpkit.protocol import Connection, ConnectionConfig, Initialized, Timeout
from mcpkit.protocol.lifecycle import has_capability
from mcpkit.runtime import ProgressCallback, Session

if TYPE_CHECKING:
    from mcpkit.types import (
        CallToolResult,
        CompleteResult,
        GetPromptResult,
        ListPromptsResult,
        ListResourcesResult,
        ListResourceTemplatesResult,
        ListToolsResult,
        Prompt,
        ReadResourceResult,
        Resource,
        ResourceTemplate,
        Tool,
    )

JSONObject = dict[str, Any]
M = TypeVar("M")
logger = logging.getLogger("mcpkit.client")

LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
_MAX_TIMEOUT = 3600.0


class Client:
    """An MCP client. Use as `async with Client(target) as client:`.

    `target`: an argv list or command string (spawned over stdio with `env` added to this
    process's environment, in `cwd`; its stderr lines go to `stderr` if given), an
    `http(s)://` URL (Streamable HTTP; `http=HttpOptions(headers=..., auth=...)` tunes it), a
    `Server` (in process), or a transport object.

    Requests time out after `timeout` seconds without an answer (reset by progress, capped at
    an hour; None waits forever); `protocol_version` pins the revision offered at initialize.

    Client features, each declared only when given: `sampling` (a handler, or `Sampling(...)`
    to declare tool use), `elicitation` (a handler for forms, or `Elicitation(..., url=True)`),
    `roots` (a list of roots/paths/URIs, or a callable returning one). Notification callbacks:
    `on_log`, `on_list_changed`, `on_resource_updated`, `on_notification` (see
    `mcpkit.client.notifications`). `max_pages` bounds the `iter_*`/`list_all_*` helpers.

    Errors (all from `mcpkit.errors`): `ConnectionClosed` (the server went away; the message
    says how, with the tail of its stderr), `RequestTimeout`, `ProtocolError` (an error answer,
    with `code` and `data`; `URLElicitationRequired` for -32042), `CapabilityNotDeclared` (the
    server did not declare what a method needs; nothing was sent), `InvalidResult`,
    `ToolError`, `ToolOutputInvalid`, `PaginationError`. Using the client outside `async with`
    raises RuntimeError.
    """

    def __init__(
        self,
        target: Any,
        *,
        name: str = "mcpkit",
        version: str = __version__,
        timeout: float | None = 60.0,
        env: dict[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        stderr: Callable[[str], None] | None = None,
        protocol_version: str | None = None,
        http: HttpOptions | None = None,
        sampling: Sampling | SamplingHandler | None = None,
        elicitation: Elicitation | ElicitationHandler | None = None,
        roots: RootsSource | None = None,
        on_log: LogHandler | None = None,
        on_list_changed: ListChangedHandler | None = None,
        on_resource_updated: ResourceUpdatedHandler | None = None,
        on_notification: NotificationHandler | None = None,
        max_pages: int = DEFAULT_MAX_PAGES,
    ) -> None:
        self._target = target
        self._protocol_version = protocol_version
        self._info: JSONObject = {"name": name, "version": version}
        self._timeout = _timeout(timeout)
        self._stdio = StdioOptions(env=env, cwd=cwd, stderr=stderr)
        self._http = http
        if sampling is not None and not isinstance(sampling, Sampling):
            sampling = Sampling(sampling)
        if elicitation is not None and not isinstance(elicitation, Elicitation):
            elicitation = Elicitation(elicitation)
        self._requests = ServerRequests(sampling, elicitation, roots)
        self._notifications = Notifications(
            on_log=on_log,
            on_list_changed=on_list_changed,
            on_resource_updated=on_resource_updated,
            on_notification=on_notification,
            list_changed=self._list_changed,
        )
        self.max_pages = max_pages
        self._session: Session | None = None
        self._initialized: Initialized | None = None
        self._tools: dict[str, Tool] = {}  # every definition seen in tools/list
        self._output_schemas: dict[str, JSONObject] = {}  # their outputSchemas, as sent
        self._tools_generation = 0  # bumped by tools/list_changed
        self._tools_complete = False  # a full listing of this generation was seen
        self._tools_fetch: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Client:
        transport = await open_transport(self._target, self._stdio, self._http)
        config = ConnectionConfig(
            role="client", info=self._info, capabilities=self._requests.capabilities()
        )
        session = Session(
            Connection(config),
            transport,
            on_request=self._requests,
            on_notification=self._notifications,
        )
        session.start()
        try:
            self._initialized = await session.initialize(self._timeout, self._protocol_version)
        except BaseException:
            await session.close()
            raise
        self._session = session
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the connection (a spawned server is shut down). Safe to call twice."""
        if self._tools_fetch is not None:
            self._tools_fetch.cancel()
        if self._session is not None:
            session, self._session = self._session, None
            await session.close()

    # -- what the server said about itself ---------------------------------------------------

    @property
    def _init(self) -> Initialized:
        if self._initialized is None:
            raise RuntimeError("the client is not connected; use `async with Client(...)`")
        return self._initialized

    @property
    def server_info(self) -> JSONObject:
        """The server's `serverInfo` (name, version, title, ...) as it sent it."""
        return self._init.peer_info

    @property
    def server_capabilities(self) -> JSONObject:
        """The server's capabilities object as it sent it (see also `supports`)."""
        return self._init.peer_capabilities

    @property
    def instructions(self) -> str | None:
        return self._init.instructions

    @property
    def protocol_version(self) -> str:
        """The revision both sides agreed on at initialize."""
        return self._init.protocol_version

    def supports(self, *path: str) -> bool:
        """Whether the server declared a capability: `supports("resources", "subscribe")`."""
        return has_capability(self._init.peer_capabilities, path)

    # -- requests ----------------------------------------------------------------------------

    async def request(
        self,
        method: str,
        params: JSONObject | None = None,
        *,
        timeout: float | Timeout | EllipsisType | None = ...,
        on_progress: ProgressCallback | None = None,
    ) -> JSONObject:
        """Send any request and return its raw result dict.

        `timeout`: seconds (or a `Timeout`; None waits forever; default: the client's).
        `on_progress(progress, total, message)` receives the server's progress and asks for it.
        Cancelling the awaiting task sends `notifications/cancelled` to the server.
        """
        session = self._session
        if session is None:
            raise RuntimeError("the client is not connected; use `async with Client(...)`")
        limit = self._timeout if timeout is ... else _timeout(timeout)
        try:
            return await session.request(method, params, timeout=limit, on_progress=on_progress)
        except ProtocolError as exc:
            if exc.code == URL_ELICITATION_REQUIRED and type(exc) is ProtocolError:
                raise URLElicitationRequired(exc.message, exc.data) from None
            raise

    async def _typed(self, kind: type[M], method: str, params: JSONObject | None = None) -> M:
        return _parse(kind, await self.request(method, params), method)

    async def ping(self) -> None:
        await self.request("ping")

    async def set_logging_level(self, level: str) -> None:
        """Ask for log messages at `level` and above (`logging/setLevel`); see `on_log`."""
        if level not in LOG_LEVELS:
            raise ValueError(f"unknown log level {level!r}; use one of {', '.join(LOG_LEVELS)}")
        await self.request("logging/setLevel", {"level": level})

    # -- tools -------------------------------------------------------------------------------

    async def list_tools(self, cursor: str | None = None) -> ListToolsResult:
        """One page of tools (`tools/list`); follow `next_cursor`, or use `iter_tools`."""
        from mcpkit.types import ListToolsResult

        page = await self._typed(ListToolsResult, "tools/list", _cursor(cursor))
        for tool in page.tools:
            self._tools[tool.name] = tool
            if tool.output_schema is not None:
                self._output_schemas[tool.name] = tool.output_schema.to_wire()
            else:
                self._output_schemas.pop(tool.name, None)
        return page

    async def iter_tools(self, *, max_pages: int | None = None) -> AsyncIterator[Tool]:
        """Every tool, page after page. Raises PaginationError past `max_pages`."""
        generation = self._tools_generation
        limit = self.max_pages if max_pages is None else max_pages
        async for tool in items(self.list_tools, "tools/list", "tools", limit):
            yield tool
        if generation == self._tools_generation:
            self._tools_complete = True

    async def list_all_tools(self, *, max_pages: int | None = None) -> list[Tool]:
        return [tool async for tool in self.iter_tools(max_pages=max_pages)]

    async def call_tool(
        self,
        name: str,
        arguments: JSONObject | None = None,
        *,
        timeout: float | Timeout | EllipsisType | None = ...,
        on_progress: ProgressCallback | None = None,
        raise_on_error: bool = False,
    ) -> CallToolResult:
        """Call a tool (`tools/call`) and return its result.

        A tool that reports failure comes back as a result with `is_error` set, unless
        `raise_on_error` is true: then it raises `ToolError` (carrying the result).
        `structuredContent` is checked against the tool's `outputSchema` (see the module
        notes); a mismatch raises `ToolOutputInvalid`. `timeout`, `on_progress` and
        cancellation work as in `request`. Also raises what `request` raises.
        """
        from mcpkit.types import CallToolResult

        fetch = None
        if name not in self._tools and not self._tools_complete:
            fetch = self._fetch_tools()  # listed while the call runs, for the outputSchema
        params: JSONObject = {"name": name, "arguments": arguments or {}}
        raw = await self.request("tools/call", params, timeout=timeout, on_progress=on_progress)
        result = _parse(CallToolResult, raw, "tools/call")
        if result.is_error:
            if raise_on_error:
                raise ToolError(name, result)
            return result
        if fetch is not None:
            await asyncio.wait([fetch])
        schema = self._output_schemas.get(name)
        if schema is not None:
            problems = _output_problems(schema, result)
            if problems:
                raise ToolOutputInvalid(name, result, problems)
        return result

    def _fetch_tools(self) -> asyncio.Task[None]:
        """List every tool once (shared by concurrent calls); failures are only logged."""
        if self._tools_fetch is None or self._tools_fetch.done():
            self._tools_fetch = asyncio.get_running_loop().create_task(self._list_quietly())
        return self._tools_fetch

    async def _list_quietly(self) -> None:
        generation = self._tools_generation
        try:
            await self.list_all_tools()
        except Exception as exc:
            logger.debug("could not list tools to validate tool output: %s", exc)
            if generation == self._tools_generation:
                self._tools_complete = True  # tried once; again after the next list_changed

    def _list_changed(self, kind: ListKind) -> None:
        if kind == "tools":
            self._tools.clear()
            self._output_schemas.clear()
            self._tools_generation += 1
            self._tools_complete = False

    # -- resources ---------------------------------------------------------------------------

    async def list_resources(self, cursor: str | None = None) -> ListResourcesResult:
        from mcpkit.types import ListResourcesResult

        return await self._typed(ListResourcesResult, "resources/list", _cursor(cursor))

    def iter_resources(self, *, max_pages: int | None = None) -> AsyncIterator[Resource]:
        limit = self.max_pages if max_pages is None else max_pages
        return items(self.list_resources, "resources/list", "resources", limit)

    async def list_all_resources(self, *, max_pages: int | None = None) -> list[Resource]:
        return [resource async for resource in self.iter_resources(max_pages=max_pages)]

    async def list_resource_templates(
        self, cursor: str | None = None
    ) -> ListResourceTemplatesResult:
        from mcpkit.types import ListResourceTemplatesResult

        method = "resources/templates/list"
        return await self._typed(ListResourceTemplatesResult, method, _cursor(cursor))

    def iter_resource_templates(
        self, *, max_pages: int | None = None
    ) -> AsyncIterator[ResourceTemplate]:
        limit = self.max_pages if max_pages is None else max_pages
        fetch = self.list_resource_templates
        return items(fetch, "resources/templates/list", "resource_templates", limit)

    async def list_all_resource_templates(
        self, *, max_pages: int | None = None
    ) -> list[ResourceTemplate]:
        return [t async for t in self.iter_resource_templates(max_pages=max_pages)]

    async def read_resource(self, uri: str) -> ReadResourceResult:
        """Read a resource (`resources/read`). An unknown URI raises ProtocolError."""
        from mcpkit.types import ReadResourceResult

        return await self._typed(ReadResourceResult, "resources/read", {"uri": uri})

    async def subscribe_resource(self, uri: str) -> None:
        """Ask for `notifications/resources/updated` about `uri` (see `on_resource_updated`)."""
        await self.request("resources/subscribe", {"uri": uri})

    async def unsubscribe_resource(self, uri: str) -> None:
        await self.request("resources/unsubscribe", {"uri": uri})

    # -- prompts and completion --------------------------------------------------------------

    async def list_prompts(self, cursor: str | None = None) -> ListPromptsResult:
        from mcpkit.types import ListPromptsResult

        return await self._typed(ListPromptsResult, "prompts/list", _cursor(cursor))

    def iter_prompts(self, *, max_pages: int | None = None) -> AsyncIterator[Prompt]:
        limit = self.max_pages if max_pages is None else max_pages
        return items(self.list_prompts, "prompts/list", "prompts", limit)

    async def list_all_prompts(self, *, max_pages: int | None = None) -> list[Prompt]:
        return [prompt async for prompt in self.iter_prompts(max_pages=max_pages)]

    async def get_prompt(
        self, name: str, arguments: dict[str, str] | None = None
    ) -> GetPromptResult:
        """Render a prompt (`prompts/get`); argument values are strings, as the spec says."""
        from mcpkit.types import GetPromptResult

        params: JSONObject = {"name": name}
        if arguments:
            params["arguments"] = arguments
        return await self._typed(GetPromptResult, "prompts/get", params)

    async def complete(
        self,
        argument: str,
        value: str,
        *,
        prompt: str | None = None,
        resource: str | None = None,
        context: dict[str, str] | None = None,
    ) -> CompleteResult:
        """Suggestions for one argument (`completion/complete`).

        Name what is being completed with `prompt=` (a prompt name) or `resource=` (a
        resource template URI); `context` gives the arguments already chosen.
        """
        from mcpkit.types import CompleteResult

        if (prompt is None) == (resource is None):
            raise TypeError("complete() needs exactly one of prompt= or resource=")
        ref = (
            {"type": "ref/prompt", "name": prompt}
            if prompt is not None
            else {"type": "ref/resource", "uri": resource}
        )
        params: JSONObject = {"ref": ref, "argument": {"name": argument, "value": value}}
        if context:
            params["context"] = {"arguments": context}
        return await self._typed(CompleteResult, "completion/complete", params)

    # -- roots -------------------------------------------------------------------------------

    async def set_roots(self, roots: RootsSource) -> None:
        """Replace the roots offered to the server and tell it (`roots/list_changed`).

        `roots`: a list of `Root`s, dicts, `file://` URIs or paths, or a callable returning
        one (call `set_roots` with it again to announce a change). Before connecting this only
        sets what will be offered. Raises CapabilityNotDeclared when connected without roots
        (pass `roots=` to `Client(...)` to offer them), TypeError/ValueError for a bad root.
        """
        if self._session is not None and self._requests.roots is None:
            raise CapabilityNotDeclared("roots/list_changed", ("roots",), "client (you)")
        self._requests.set_roots(roots)
        if self._session is not None:
            self._session.notify("notifications/roots/list_changed")


def _timeout(timeout: float | Timeout | None) -> Timeout | None:
    if timeout is None or isinstance(timeout, Timeout):
        return timeout
    return Timeout(timeout, reset_on_progress=True, maximum=max(_MAX_TIMEOUT, timeout))


def _cursor(cursor: str | None) -> JSONObject | None:
    return None if cursor is None else {"cursor": cursor}


def _parse(kind: type[M], raw: JSONObject, method: str) -> M:
    from pydantic import ValidationError

    try:
        return kind.from_wire(raw)  # type: ignore[attr-defined, no-any-return]
    except ValidationError as exc:
        raise InvalidResult(method, validation_summary(exc)) from None


def _output_problems(schema: JSONObject, result: CallToolResult) -> list[str]:
    if result.structured_content is None:
        return ["the tool declares an outputSchema but returned no structuredContent"]
    return schema_errors(schema, result.structured_content)
