"""`Client`: connect to a server, run the handshake, call it with typed methods.

How this works: `Client(target)` resolves the target to a transport (`_targets.py`, the only
place the client reaches for one), wraps it in a runtime `Session` around a client-role
`Connection`, and settles the protocol era on `__aenter__` (`era.py`): a `server/discover`
probe for 2026-07-28 ("modern": no handshake, the envelope on every request), or `initialize`.
The capabilities it declares follow from what you gave it: `sampling=`, `elicitation=` and
`roots=` each add theirs, nothing else does (modern: in every request's envelope).
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
- Modern era: `input_required` results are answered with the same handlers that serve
  handshake-era server requests (`mrtr.py`); cacheable results come from a `ResponseCache`
  while fresh; `set_logging_level` stamps the level on later requests; `listen()` covers
  change notifications in both eras (`listen.py`). The default mode is "auto" for command
  lines and URLs, "legacy" for in-process servers and transport objects (their callers rely
  on handshake-era behaviour: requests from the server mid-call, unsolicited notifications).
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
from mcpkit.client.era import (
    DEFAULT_PROBE_TIMEOUT,
    Chosen,
    EraName,
    Reprobe,
    check_mode,
    choose_era,
    server_key,
)
from mcpkit.client.handlers import (
    Elicitation,
    ElicitationHandler,
    RootsSource,
    Sampling,
    SamplingHandler,
    ServerRequests,
    validation_summary,
)
from mcpkit.client.listen import Listeners, Subscription, listen_filter
from mcpkit.client.mrtr import (
    DEFAULT_MAX_INPUT_ROUNDS,
    InputRequired,
    InputRequiredError,
    answer_all,
    pending_input,
    result_kind,
    retry_params,
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
    HEADER_MISMATCH,
    URL_ELICITATION_REQUIRED,
    CapabilityNotDeclared,
    InvalidResult,
    LocalProtocolViolation,
    ProtocolError,
    ToolError,
    ToolOutputInvalid,
    URLElicitationRequired,
)
from mcpkit.protocol import Connection, ConnectionConfig, Timeout
from mcpkit.protocol.lifecycle import has_capability
from mcpkit.protocol.modern import CACHEABLE_METHODS, LOG_LEVEL
from mcpkit.runtime import ProgressCallback, Session
from mcpkit.types.versions import MODERN_VERSIONS

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

DEFAULT_CACHE_ENTRIES = 512
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
        mode: str | None = None,
        probe_timeout: float = DEFAULT_PROBE_TIMEOUT,
        cache: bool = True,
        max_input_rounds: int = DEFAULT_MAX_INPUT_ROUNDS,
    ) -> None:
        if mode is None and protocol_version is not None:
            # A pinned revision pins its era too.
            if protocol_version in MODERN_VERSIONS:
                mode, protocol_version = protocol_version, None
            else:
                mode = "legacy"
        if mode is None:
            mode = "auto" if server_key(target) is not None else "legacy"
        self._mode = check_mode(mode)
        self._probe_timeout = probe_timeout
        self.max_input_rounds = max_input_rounds
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
        self._chosen: Chosen | None = None
        self._log_level: str | None = None  # modern: stamped on every request
        self._cache: Any = None  # a ResponseCache in modern mode, unless cache=False
        self._use_cache = cache
        self._header_paths: dict[str, dict[str, tuple[str, ...]]] | None = None  # HTTP only
        self._listeners = Listeners()
        self._tools: dict[str, Tool] = {}  # every definition seen in tools/list
        self._output_schemas: dict[str, JSONObject] = {}  # their outputSchemas, as sent
        self._tools_generation = 0  # bumped by tools/list_changed
        self._tools_complete = False  # a full listing of this generation was seen
        self._tools_fetch: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Client:
        key = server_key(self._target)
        for _attempt in range(2):
            session = await self._open()
            try:
                self._chosen = await choose_era(
                    session,
                    mode=self._mode,
                    key=key,
                    probe_timeout=self._probe_limit(),
                    init_timeout=self._timeout,
                    handshake_version=self._protocol_version,
                )
            except Reprobe:
                await session.close()
                continue
            except BaseException:
                await session.close()
                raise
            break
        self._session = session
        if self._chosen.era == "modern":
            self._header_paths = getattr(session.transport, "tool_header_paths", None)
            if self._use_cache:
                self._cache = _new_cache()
        return self

    def _ack_timeout(self) -> float | None:
        return self._timeout.timeout if self._timeout is not None else None

    def _probe_limit(self) -> float:
        """The probe waits `probe_timeout`, or the client's own timeout when that is shorter."""
        limit = self._timeout.timeout if self._timeout is not None else None
        return self._probe_timeout if limit is None else min(limit, self._probe_timeout)

    async def _open(self) -> Session:
        transport = await open_transport(self._target, self._stdio, self._http)
        config = ConnectionConfig(
            role="client", info=self._info, capabilities=self._requests.capabilities()
        )
        session = Session(
            Connection(config),
            transport,
            on_request=self._requests,
            on_notification=self._on_notification,
        )
        session.start()
        return session

    def _on_notification(self, session: Session, event: Any) -> Any:
        self._listeners.route(event.method, event.params)
        if self._cache is not None:
            self._cache.invalidate(event.method, event.params)
        return self._notifications(session, event)

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
        self._listeners.end_all()
        if self._session is not None:
            session, self._session = self._session, None
            await session.close()

    # -- what the server said about itself ---------------------------------------------------

    @property
    def _era(self) -> Chosen:
        if self._chosen is None or self._session is None:
            raise RuntimeError("the client is not connected; use `async with Client(...)`")
        return self._chosen

    @property
    def era(self) -> EraName:
        """ "modern" (2026-07-28 on: no handshake, every request carries its envelope) or
        "legacy" (the initialize handshake)."""
        return self._era.era

    @property
    def server_info(self) -> JSONObject:
        """The server's `serverInfo` (name, version, title, ...) as it sent it (modern: from
        `server/discover`'s `_meta`; {} when it did not say)."""
        self._era  # noqa: B018 - raises when not connected
        assert self._session is not None
        return self._session.connection.peer_info or {}

    @property
    def server_capabilities(self) -> JSONObject:
        """The server's capabilities object as it sent it (see also `supports`)."""
        self._era  # noqa: B018 - raises when not connected
        assert self._session is not None
        return self._session.connection.peer_capabilities or {}

    @property
    def instructions(self) -> str | None:
        self._era  # noqa: B018 - raises when not connected
        assert self._session is not None
        return self._session.connection.instructions

    @property
    def protocol_version(self) -> str:
        """The revision in use: agreed at initialize, or the per-request revision (modern)."""
        return self._era.version

    @property
    def discovered(self) -> JSONObject | None:
        """Modern: the server's `server/discover` result as sent (None in the legacy era)."""
        return self._era.discovered

    def supports(self, *path: str) -> bool:
        """Whether the server declared a capability: `supports("resources", "subscribe")`."""
        return has_capability(self.server_capabilities, path)

    # -- requests ----------------------------------------------------------------------------

    async def request(
        self,
        method: str,
        params: JSONObject | None = None,
        *,
        timeout: float | Timeout | EllipsisType | None = ...,
        on_progress: ProgressCallback | None = None,
        input_required: str = "answer",
    ) -> JSONObject:
        """Send any request and return its raw result dict.

        `timeout`: seconds (or a `Timeout`; None waits forever; default: the client's).
        `on_progress(progress, total, message)` receives the server's progress and asks for it.
        Cancelling the awaiting task cancels the request (stdio: `notifications/cancelled`;
        modern HTTP: its response stream is closed).

        Modern servers: an `input_required` result (tools/call, prompts/get, resources/read)
        is answered through this client's sampling / elicitation / roots handlers and the
        request retried, up to `max_input_rounds` times (`input_required="return"` returns
        the raw InputRequiredResult instead). Cacheable results (server/discover, list
        pages, resources/read) come from the response cache while fresh. Raises
        InputRequiredError, InvalidResult (unknown resultType), and what the session raises.
        """
        session = self._session
        if session is None:
            raise RuntimeError("the client is not connected; use `async with Client(...)`")
        if input_required not in ("answer", "return"):
            raise ValueError("input_required is 'answer' or 'return'")
        limit = self._timeout if timeout is ... else _timeout(timeout)
        raw = await self._exchange(session, method, params, limit, on_progress)
        if not session.connection.modern or result_kind(method, raw) == "complete":
            return raw
        if input_required == "return":
            return raw
        return await self._answer_rounds(
            session, method, params, raw, limit=limit, on_progress=on_progress
        )

    async def _exchange(
        self,
        session: Session,
        method: str,
        params: JSONObject | None,
        limit: Timeout | None,
        on_progress: ProgressCallback | None,
    ) -> JSONObject:
        cache = self._cache if session.connection.modern else None
        cacheable = cache is not None and method in CACHEABLE_METHODS and _plain(params)
        now = self._now()
        if cacheable:
            hit = cache.get(method, params, now=now)
            if hit is not None:
                return hit  # type: ignore[no-any-return]
        sent = params
        if self._log_level is not None and session.connection.modern:
            sent = _with_meta(params, {LOG_LEVEL: self._log_level})
        try:
            raw = await session.request(method, sent, timeout=limit, on_progress=on_progress)
        except ProtocolError as exc:
            if exc.code == URL_ELICITATION_REQUIRED and type(exc) is ProtocolError:
                raise URLElicitationRequired(exc.message, exc.data) from None
            raise
        if cacheable and raw.get("resultType", "complete") == "complete":
            cache.put(method, params, raw, now=self._now())
        return raw

    async def _answer_rounds(
        self,
        session: Session,
        method: str,
        params: JSONObject | None,
        raw: JSONObject,
        *,
        limit: Timeout | None,
        on_progress: ProgressCallback | None,
    ) -> JSONObject:
        for _round in range(self.max_input_rounds):
            pending = pending_input(method, params, raw)
            responses = await self.answer_input(pending)
            again = retry_params(pending.params, responses, pending.request_state)
            raw = await self._exchange(session, method, again, limit, on_progress)
            if result_kind(method, raw) == "complete":
                return raw
        raise InputRequiredError(
            f"{method}: the server still asked for input after {self.max_input_rounds} rounds "
            "(max_input_rounds)"
        )

    async def answer_input(self, pending: InputRequired) -> JSONObject | None:
        """Answer every request in an `InputRequired` with this client's handlers (all at
        once); the `inputResponses` to send back, None when the server asked for nothing.
        Raises InputRequiredError (a kind this client did not declare), your handler's errors.
        """
        if not pending.input_requests:
            return None
        return await answer_all(self._requests, pending.input_requests)

    def _now(self) -> float:
        return asyncio.get_running_loop().time()

    async def _typed(self, kind: type[M], method: str, params: JSONObject | None = None) -> M:
        return _parse(kind, await self.request(method, params), method)

    async def _typed_or_pending(
        self,
        kind: type[M],
        method: str,
        params: JSONObject,
        input_required: str,
        *,
        timeout: float | Timeout | EllipsisType | None = ...,
        on_progress: ProgressCallback | None = None,
    ) -> M | InputRequired:
        raw = await self.request(
            method, params, timeout=timeout, on_progress=on_progress, input_required=input_required
        )
        if raw.get("resultType") == "input_required":
            return pending_input(method, params, raw)
        return _parse(kind, raw, method)

    async def ping(self) -> None:
        """Check the server answers. Modern servers have no `ping`: a `server/discover` (not
        from the cache) stands in for it."""
        session = self._session
        if session is not None and session.connection.modern:
            await session.request("server/discover", None, timeout=self._timeout)
            return
        await self.request("ping")

    async def set_logging_level(self, level: str) -> None:
        """Ask for log messages at `level` and above; see `on_log`.

        Handshake era: `logging/setLevel`. Modern: nothing is sent; the level is recorded and
        stamped on every later request (`_meta` `io.modelcontextprotocol/logLevel`), and the
        server logs on the response stream of each request.
        """
        if level not in LOG_LEVELS:
            raise ValueError(f"unknown log level {level!r}; use one of {', '.join(LOG_LEVELS)}")
        session = self._session
        if session is not None and session.connection.modern:
            self._log_level = level
            return
        await self.request("logging/setLevel", {"level": level})

    # -- tools -------------------------------------------------------------------------------

    async def list_tools(self, cursor: str | None = None) -> ListToolsResult:
        """One page of tools (`tools/list`); follow `next_cursor`, or use `iter_tools`."""
        from mcpkit.types import ListToolsResult

        page = await self._typed(ListToolsResult, "tools/list", _cursor(cursor))
        if self._header_paths is not None:
            page = _with_header_paths(page, self._header_paths)
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
        input_required: str = "answer",
        input_responses: JSONObject | None = None,
        request_state: str | None = None,
    ) -> CallToolResult:
        """Call a tool (`tools/call`) and return its result.

        A tool that reports failure comes back as a result with `is_error` set, unless
        `raise_on_error` is true: then it raises `ToolError` (carrying the result).
        `structuredContent` is checked against the tool's `outputSchema` (see the module
        notes); a mismatch raises `ToolOutputInvalid`. `timeout`, `on_progress` and
        cancellation work as in `request`. Also raises what `request` raises.

        Modern servers may ask for input first (see `request`): answered with this client's
        handlers by default. With `input_required="return"` an `InputRequired` comes back
        instead (the return type is then `CallToolResult | InputRequired`); call again with
        `input_responses=` (see `answer_input`) and `request_state=` to continue. Over
        modern HTTP a -32020 HeaderMismatch answer re-lists the tools and retries once.
        """
        from mcpkit.types import CallToolResult

        fetch = None
        if name not in self._tools and not self._tools_complete:
            fetch = self._fetch_tools()  # listed while the call runs, for the outputSchema
        if fetch is not None and self._header_paths is not None:
            await asyncio.wait([fetch])  # modern HTTP: the call's headers need the definition
        params: JSONObject = {"name": name, "arguments": arguments or {}}
        params = retry_params(params, input_responses, request_state)
        kwargs: Any = {"timeout": timeout, "on_progress": on_progress}
        try:
            outcome = await self._typed_or_pending(
                CallToolResult, "tools/call", params, input_required, **kwargs
            )
        except ProtocolError as exc:
            if exc.code != HEADER_MISMATCH or self._header_paths is None:
                raise
            logger.info("%s: header mismatch (%s); listing the tools again", name, exc.message)
            self._list_changed("tools")
            await self.list_all_tools()
            outcome = await self._typed_or_pending(
                CallToolResult, "tools/call", params, input_required, **kwargs
            )
        if isinstance(outcome, InputRequired):
            return outcome  # type: ignore[return-value]  # asked for with input_required
        result = outcome
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
            if self._header_paths is not None:
                self._header_paths.clear()
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

    async def read_resource(
        self,
        uri: str,
        *,
        input_required: str = "answer",
        input_responses: JSONObject | None = None,
        request_state: str | None = None,
    ) -> ReadResourceResult:
        """Read a resource (`resources/read`). An unknown URI raises ProtocolError.
        Input-required rounds as in `call_tool`."""
        from mcpkit.types import ReadResourceResult

        params = retry_params({"uri": uri}, input_responses, request_state)
        return await self._typed_or_pending(  # type: ignore[return-value]
            ReadResourceResult, "resources/read", params, input_required
        )

    async def subscribe_resource(self, uri: str) -> None:
        """Ask for `notifications/resources/updated` about `uri` (see `on_resource_updated`).

        Handshake era only: 2026-07-28 has no `resources/subscribe`; use
        `listen(resource_uris=[...])`, which works in both eras (LocalProtocolViolation).
        """
        self._legacy_only("resources/subscribe", "listen(resource_uris=[...])")
        await self.request("resources/subscribe", {"uri": uri})

    def _legacy_only(self, method: str, instead: str) -> None:
        if self._connected().connection.modern:
            raise LocalProtocolViolation(
                f"{method} does not exist in protocol {self.protocol_version}; use "
                f"client.{instead} (works with servers of either era)"
            )

    def _connected(self) -> Session:
        if self._session is None:
            raise RuntimeError("the client is not connected; use `async with Client(...)`")
        return self._session

    # -- subscriptions -----------------------------------------------------------------------

    def listen(
        self,
        *,
        tools: bool = False,
        prompts: bool = False,
        resources: bool = False,
        resource_uris: list[str] | None = None,
    ) -> Subscription:
        """Change notifications, as `async with client.listen(tools=True) as sub:` then
        `async for note in sub:` (each a `Notification(method, params)`).

        `tools` / `prompts` / `resources`: the `*/list_changed` notifications;
        `resource_uris`: `notifications/resources/updated` for these URIs. Entering waits for
        the server's acknowledgement; `sub.acknowledged` is what it agreed to (types it does
        not support are left out). Modern servers: one `subscriptions/listen` request, ended
        on exit; a server that ends it ends the iteration. Handshake-era servers: the same
        filter over list_changed and `resources/subscribe`. The usual callbacks
        (`on_list_changed`, ...) still run for these notifications.
        """
        wanted = listen_filter(
            tools=tools, prompts=prompts, resources=resources, resource_uris=resource_uris
        )
        return Subscription(self, wanted)

    async def unsubscribe_resource(self, uri: str) -> None:
        self._legacy_only("resources/unsubscribe", "listen(resource_uris=[...])")
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
        self,
        name: str,
        arguments: dict[str, str] | None = None,
        *,
        input_required: str = "answer",
        input_responses: JSONObject | None = None,
        request_state: str | None = None,
    ) -> GetPromptResult:
        """Render a prompt (`prompts/get`); argument values are strings, as the spec says.
        Input-required rounds as in `call_tool`."""
        from mcpkit.types import GetPromptResult

        params: JSONObject = {"name": name}
        if arguments:
            params["arguments"] = arguments
        params = retry_params(params, input_responses, request_state)
        return await self._typed_or_pending(  # type: ignore[return-value]
            GetPromptResult, "prompts/get", params, input_required
        )

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
        if self._session is not None and not self._session.connection.modern:
            self._session.notify("notifications/roots/list_changed")


def _timeout(timeout: float | Timeout | None) -> Timeout | None:
    if timeout is None or isinstance(timeout, Timeout):
        return timeout
    return Timeout(timeout, reset_on_progress=True, maximum=max(_MAX_TIMEOUT, timeout))


def _new_cache() -> Any:
    try:
        from mcpkit.client.cache import ResponseCache
    except ImportError:  # pragma: no cover - until the cache module lands
        return None
    return ResponseCache(DEFAULT_CACHE_ENTRIES)


def _plain(params: JSONObject | None) -> bool:
    """A request the cache may answer: not an input-required retry."""
    return not params or ("inputResponses" not in params and "requestState" not in params)


def _with_meta(params: JSONObject | None, extra: JSONObject) -> JSONObject:
    params = dict(params or {})
    own = params.get("_meta")
    params["_meta"] = {**extra, **own} if isinstance(own, dict) else extra
    return params


def _with_header_paths(
    page: ListToolsResult, paths: dict[str, dict[str, tuple[str, ...]]]
) -> ListToolsResult:
    """Modern HTTP: remember each tool's `x-mcp-header` paths; drop tools whose annotations
    are invalid (the spec requires it), with a warning naming the tool and why."""
    try:
        from mcpkit.protocol.http_headers import InvalidHeaderAnnotation, header_paths
    except ImportError:  # pragma: no cover - until the header codec lands
        return page
    kept = []
    for tool in page.tools:
        try:
            found = header_paths(tool.input_schema.to_wire())
        except InvalidHeaderAnnotation as exc:
            logger.warning("ignoring tool %r: invalid x-mcp-header annotation: %s", tool.name, exc)
            paths.pop(tool.name, None)
            continue
        if found:
            paths[tool.name] = found
        else:
            paths.pop(tool.name, None)
        kept.append(tool)
    if len(kept) == len(page.tools):
        return page
    return page.model_copy(update={"tools": kept})


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
