"""`Client`: connect to a server, run the handshake, call it with typed methods.

How this works: `Client(target)` resolves the target to a transport (`_targets.py`, the only
place the client reaches for one), wraps it in a runtime `Session` around a client-role
`Connection`, and settles the protocol era on `__aenter__` (`era.py`): a `server/discover`
probe for 2026-07-28 (the per-request era: no handshake, the envelope on every request), or
`initialize` (the handshake era).
The capabilities it declares follow from what you gave it: `sampling=`, `elicitation=` and
`roots=` each add theirs, nothing else does (per-request era: in every request's envelope).
The server's requests go to `ServerRequests` (handlers.py), its notifications to
`Notifications` (notifications.py), and each typed method below is one MCP request whose
result is parsed into its `mcpkit.types` model.

Decisions worth knowing (why `call_tool` returns tool errors, why output is validated, why
annotations are never read, the default era per target): docs/client.md.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import AsyncIterator, Callable
from types import EllipsisType
from typing import TYPE_CHECKING, Any, Literal, overload

from mcpkit._version import __version__
from mcpkit.client._core import ClientCore
from mcpkit.client._targets import HTTPAuth, HTTPOptions, Target
from mcpkit.client.era import DEFAULT_PROBE_TIMEOUT
from mcpkit.client.handlers import (
    Elicitation,
    ElicitationHandler,
    RootsSource,
    Sampling,
    SamplingHandler,
)
from mcpkit.client.listen import ListenHost, Subscription, listen_filter
from mcpkit.client.mrtr import (
    DEFAULT_MAX_INPUT_ROUNDS,
    InputMode,
    InputRequired,
    retry_params,
)
from mcpkit.client.notifications import (
    ListChangedHandler,
    LogHandler,
    NotificationHandler,
    ResourceUpdatedHandler,
)
from mcpkit.client.options import ClientOptions
from mcpkit.client.pagination import DEFAULT_MAX_PAGES, items
from mcpkit.errors import (
    HEADER_MISMATCH,
    CapabilityNotDeclared,
    ProtocolError,
    ToolError,
    ToolOutputInvalid,
)
from mcpkit.protocol import Timeout
from mcpkit.runtime import ProgressCallback
from mcpkit.types.eras import Era

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
logger = logging.getLogger("mcpkit.client")


class Client(ClientCore):
    """An MCP client. Use as `async with Client(target) as client:`.

    `target`: an argv list or command string (spawned over stdio with `env` added to this
    process's environment, in `cwd`; its stderr lines go to `stderr` if given), an
    `http(s)://` URL (Streamable HTTP; `http=HTTPOptions(headers=..., auth=...)` tunes it;
    `auth=OAuth()` from `mcpkit.auth.client` logs in to a protected server), a `Server` (in
    process), or a transport object.

    Requests time out after `timeout` seconds without an answer (reset by progress, capped at
    an hour; None waits forever); `protocol_version` pins the revision offered at initialize.
    `mode` ("auto", "handshake", "per-request" or a per-request revision such as "2026-07-28";
    the old "legacy" means "handshake", deprecated) chooses the era (`client.era` says which
    one was settled, an `mcpkit.Era`); in auto mode a stdio server
    that has not answered the `server/discover` probe after `probe_timeout` seconds is sent
    `initialize` too, and whichever answers settles the era, within `timeout` (era.py).

    Client features, each declared only when given: `sampling` (a handler, or `Sampling(...)`
    to declare tool use), `elicitation` (a handler for forms, or `Elicitation(..., url=True)`),
    `roots` (a list of roots/paths/URIs, or a callable returning one). Notification callbacks:
    `on_log`, `on_list_changed`, `on_resource_updated`, `on_notification` (see
    `mcpkit.client.notifications`). `max_pages` bounds the `iter_*`/`list_all_*` helpers.
    `cache=False` turns off the 2026-07-28 result cache, whose freshness (`ttlMs`) is read on
    `clock` (seconds, default `time.monotonic`; a test passes a fake one). `apps=True`
    declares the MCP Apps extension (`io.modelcontextprotocol/ui`, its MIME types), in the
    handshake and on 2026-07-28 requests alike: for an application that renders views.
    `telemetry=False`: no OpenTelemetry spans or metrics from this client even with an SDK
    set up (docs/observability.md).

    Errors (all from `mcpkit.errors`): `ConnectionClosed` (the server went away, for every
    request waiting and every later one, and `wait_closed()` returns; the message says how,
    with the tail of a stdio server's stderr), `RequestTimeout`, `ProtocolError` (an error answer,
    with `code` and `data`; `URLElicitationRequired` for -32042), `CapabilityNotDeclared` (the
    server did not declare what a method needs; nothing was sent), `InvalidResult`,
    `ToolError`, `ToolOutputInvalid`, `PaginationError`. Every method that sends a request may
    raise the first three; its docstring names what else. Using the client outside `async
    with` raises RuntimeError. The constructor raises ValueError for `auth=` with a target
    that is not an http(s) URL, or with `http=HTTPOptions(auth=...)` too; `async with` raises
    ValueError for a URL scheme other than http(s) and TypeError for a target of another
    kind; a failed OAuth login fails the request that needed it with the OAuthError's message
    (step, URL, the server's error).

    The keyword arguments become one frozen `ClientOptions` (`client.options`);
    `Client.with_options(target, options)` takes one made beforehand.
    """

    def __init__(
        self,
        target: Target,
        *,
        name: str = "mcpkit",
        version: str = __version__,
        timeout: float | None = 60.0,
        env: dict[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        stderr: Callable[[str], None] | None = None,
        protocol_version: str | None = None,
        http: HTTPOptions | None = None,
        auth: HTTPAuth | None = None,
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
        clock: Callable[[], float] = time.monotonic,
        apps: bool = False,
        telemetry: bool = True,
    ) -> None:
        options = ClientOptions(
            name=name, version=version, timeout=timeout, env=env, cwd=cwd, stderr=stderr,
            protocol_version=protocol_version, http=http, auth=auth, sampling=sampling,
            elicitation=elicitation, roots=roots, on_log=on_log, on_list_changed=on_list_changed,
            on_resource_updated=on_resource_updated, on_notification=on_notification,
            max_pages=max_pages, mode=mode, probe_timeout=probe_timeout, cache=cache,
            max_input_rounds=max_input_rounds, clock=clock, apps=apps, telemetry=telemetry,
        )  # fmt: skip
        super().__init__(target, options)

    @classmethod
    def with_options(cls, target: Target, options: ClientOptions) -> Client:
        """A client for `target` configured by `options` (see `ClientOptions`)."""
        client = cls.__new__(cls)
        ClientCore.__init__(client, target, options)
        return client

    # -- tools -------------------------------------------------------------------------------

    async def list_tools(self, cursor: str | None = None) -> ListToolsResult:
        """One page of tools (`tools/list`); follow `next_cursor`, or use `iter_tools`."""
        from mcpkit.types import ListToolsResult

        page = await self._typed(ListToolsResult, "tools/list", _cursor(cursor))
        return self._catalog.remember(page, with_headers=self._headers_matter)

    async def iter_tools(self, *, max_pages: int | None = None) -> AsyncIterator[Tool]:
        """Every tool, page after page. Raises PaginationError past `max_pages`."""
        catalog = self._catalog
        generation = catalog.generation
        limit = self.max_pages if max_pages is None else max_pages
        async for tool in items(self.list_tools, "tools/list", "tools", limit):
            yield tool
        if generation == catalog.generation:
            catalog.complete = True

    async def list_all_tools(self, *, max_pages: int | None = None) -> list[Tool]:
        return [tool async for tool in self.iter_tools(max_pages=max_pages)]

    async def learn_tool(self, name: str) -> None:
        """Make sure tool `name`'s definition is known before a raw `request("tools/call")`
        (a proxy's): over 2026-07-28 HTTP its Mcp-Param headers come from it. Lists the
        tools once for this generation when it is not known; a failure to list is logged."""
        if not self._catalog.knows(name):
            await asyncio.wait([self._catalog.fetch(self.list_all_tools)])

    @overload
    async def call_tool(
        self,
        name: str,
        arguments: JSONObject | None = None,
        *,
        timeout: float | Timeout | EllipsisType | None = ...,
        on_progress: ProgressCallback | None = None,
        raise_on_error: bool = False,
        input_required: Literal["answer"] = "answer",
        input_responses: JSONObject | None = None,
        request_state: str | None = None,
    ) -> CallToolResult: ...

    @overload
    async def call_tool(
        self,
        name: str,
        arguments: JSONObject | None = None,
        *,
        timeout: float | Timeout | EllipsisType | None = ...,
        on_progress: ProgressCallback | None = None,
        raise_on_error: bool = False,
        input_required: Literal["return"],
        input_responses: JSONObject | None = None,
        request_state: str | None = None,
    ) -> CallToolResult | InputRequired: ...

    async def call_tool(
        self,
        name: str,
        arguments: JSONObject | None = None,
        *,
        timeout: float | Timeout | EllipsisType | None = ...,
        on_progress: ProgressCallback | None = None,
        raise_on_error: bool = False,
        input_required: InputMode = "answer",
        input_responses: JSONObject | None = None,
        request_state: str | None = None,
    ) -> CallToolResult | InputRequired:
        """Call a tool (`tools/call`) and return its result.

        A tool that reports failure comes back as a result with `is_error` set, unless
        `raise_on_error` is true: then it raises `ToolError` (carrying the result).
        `structuredContent` is checked against the tool's `outputSchema` (see the module
        notes); a mismatch raises `ToolOutputInvalid`. `timeout`, `on_progress` and
        cancellation work as in `request`. Also raises what `request` raises.

        Per-request servers may ask for input first (see `request`): answered with this client's
        handlers by default. With `input_required="return"` an `InputRequired` comes back
        instead (typed so: `CallToolResult | InputRequired`); call again with
        `input_responses=` (see `answer_input`) and `request_state=` to continue. Over
        per-request HTTP a -32020 HeaderMismatch answer re-lists the tools and retries once.
        """
        from mcpkit.types import CallToolResult

        fetch = None
        if not self._catalog.knows(name):  # listed while the call runs, for the outputSchema
            fetch = self._catalog.fetch(self.list_all_tools)
        # Wait for the definition when the call depends on it: per-request HTTP (its headers)
        # and a 2025-11-25 server that runs tool calls as tasks (taskSupport "required" needs
        # params.task, even on the first call).
        per_request = self.era is Era.PER_REQUEST
        tasks_possible = not per_request and self.supports("tasks", "requests", "tools", "call")
        if fetch is not None and (self._headers_matter or tasks_possible):
            await asyncio.wait([fetch])
        params: JSONObject = {"name": name, "arguments": arguments or {}}
        if self._must_be_task(name):
            params["task"] = {}  # 2025-11-25: a tool with taskSupport "required"
        params = retry_params(params, input_responses, request_state)
        kwargs: Any = {"timeout": timeout, "on_progress": on_progress}
        try:
            outcome = await self._typed_or_pending(
                CallToolResult, "tools/call", params, input_required, **kwargs
            )
        except ProtocolError as exc:
            if exc.code != HEADER_MISMATCH or not self._headers_matter:
                raise
            logger.info("%s: header mismatch (%s); listing the tools again", name, exc.message)
            self._list_changed("tools")
            await self.list_all_tools()
            outcome = await self._typed_or_pending(
                CallToolResult, "tools/call", params, input_required, **kwargs
            )
        if isinstance(outcome, InputRequired):
            return outcome  # only with input_required="return"
        result = outcome
        if result.is_error:
            if raise_on_error:
                raise ToolError(name, result)
            return result
        if fetch is not None:
            await asyncio.wait([fetch])
        problems = self._catalog.output_problems(name, result)
        if problems:
            raise ToolOutputInvalid(name, result, problems)
        return result

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

    @overload
    async def read_resource(
        self,
        uri: str,
        *,
        input_required: Literal["answer"] = "answer",
        input_responses: JSONObject | None = None,
        request_state: str | None = None,
    ) -> ReadResourceResult: ...

    @overload
    async def read_resource(
        self,
        uri: str,
        *,
        input_required: Literal["return"],
        input_responses: JSONObject | None = None,
        request_state: str | None = None,
    ) -> ReadResourceResult | InputRequired: ...

    async def read_resource(
        self,
        uri: str,
        *,
        input_required: InputMode = "answer",
        input_responses: JSONObject | None = None,
        request_state: str | None = None,
    ) -> ReadResourceResult | InputRequired:
        """Read a resource (`resources/read`). An unknown URI raises ProtocolError.
        Input-required rounds as in `call_tool`."""
        from mcpkit.types import ReadResourceResult

        params = retry_params({"uri": uri}, input_responses, request_state)
        return await self._typed_or_pending(
            ReadResourceResult, "resources/read", params, input_required
        )

    async def subscribe_resource(self, uri: str) -> None:
        """Ask for `notifications/resources/updated` about `uri` (see `on_resource_updated`).

        Handshake era only: 2026-07-28 has no `resources/subscribe`; use
        `listen(resource_uris=[...])`, which works in both eras (LocalProtocolViolation).
        """
        self._handshake_only("resources/subscribe", "listen(resource_uris=[...])")
        await self.request("resources/subscribe", {"uri": uri})

    # -- subscriptions -----------------------------------------------------------------------

    def listen(
        self,
        *,
        tools: bool = False,
        prompts: bool = False,
        resources: bool = False,
        resource_uris: list[str] | None = None,
        task_ids: list[str] | None = None,
    ) -> Subscription:
        """Change notifications, as `async with client.listen(tools=True) as sub:` then
        `async for note in sub:` (each a `Notification(method, params)`).

        `tools` / `prompts` / `resources`: the `*/list_changed` notifications;
        `resource_uris`: `notifications/resources/updated` for these URIs. Entering waits for
        the server's acknowledgement; `sub.acknowledged` is what it agreed to (types it does
        not support are left out, in either era: never an error; {} when it can deliver none
        of it). Per-request servers: one `subscriptions/listen` request, ended on exit; a server
        that ends it ends the iteration. Handshake-era servers: the same filter over
        list_changed and `resources/subscribe`. The usual callbacks
        (`on_list_changed`, ...) still run for these notifications. `task_ids` (per-request
        servers with the tasks extension): `notifications/tasks` for these tasks of yours, on
        every change of status (handshake-era servers send `notifications/tasks/status` to
        `on_notification` unasked).
        """
        wanted = listen_filter(
            tools=tools, prompts=prompts, resources=resources, resource_uris=resource_uris
        )
        if task_ids:
            wanted["taskIds"] = list(task_ids)
        host = ListenHost(
            self._connected,
            self._listeners,
            self._ack_timeout,
            self.supports,
            self.subscribe_resource,
            self.unsubscribe_resource,
        )
        return Subscription(host, wanted)

    async def unsubscribe_resource(self, uri: str) -> None:
        """Stop `subscribe_resource`'s notifications. Handshake era only, as it is
        (LocalProtocolViolation)."""
        self._handshake_only("resources/unsubscribe", "listen(resource_uris=[...])")
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

    @overload
    async def get_prompt(
        self,
        name: str,
        arguments: dict[str, str] | None = None,
        *,
        input_required: Literal["answer"] = "answer",
        input_responses: JSONObject | None = None,
        request_state: str | None = None,
    ) -> GetPromptResult: ...

    @overload
    async def get_prompt(
        self,
        name: str,
        arguments: dict[str, str] | None = None,
        *,
        input_required: Literal["return"],
        input_responses: JSONObject | None = None,
        request_state: str | None = None,
    ) -> GetPromptResult | InputRequired: ...

    async def get_prompt(
        self,
        name: str,
        arguments: dict[str, str] | None = None,
        *,
        input_required: InputMode = "answer",
        input_responses: JSONObject | None = None,
        request_state: str | None = None,
    ) -> GetPromptResult | InputRequired:
        """Render a prompt (`prompts/get`); argument values are strings, as the spec says.
        Input-required rounds as in `call_tool`."""
        from mcpkit.types import GetPromptResult

        params: JSONObject = {"name": name}
        if arguments:
            params["arguments"] = arguments
        params = retry_params(params, input_responses, request_state)
        return await self._typed_or_pending(GetPromptResult, "prompts/get", params, input_required)

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
        resource template URI); `context` gives the arguments already chosen. Raises
        TypeError unless exactly one is given, CapabilityNotDeclared when the server has no
        `completions` capability.
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
        if self._session is not None and not self._session.connection.per_request:
            self._session.notify("notifications/roots/list_changed")


def _cursor(cursor: str | None) -> JSONObject | None:
    return None if cursor is None else {"cursor": cursor}
