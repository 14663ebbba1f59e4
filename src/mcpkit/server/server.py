"""`Server`: register tools, resources and prompts with decorators; serve them on any transport.

The server is a composition root: each feature (tools, resources, prompts, completion,
logging) is a registry that offers its request handlers and its capability; the server joins
them into one dispatch table, keeps per-client state, and tells connected clients when a
registry changes.

What it declares (its configuration: name, version, instructions, capabilities) is worked out
once and kept until something changes it -- a registry, or one of those attributes -- so a
request that arrives after a change is served by the new configuration (`serving_rules`).
A handshake session keeps what was declared at its `initialize`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import time
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar, Unpack, overload

from mcpkit.errors import MethodNotFound
from mcpkit.protocol import (
    Connection,
    ConnectionConfig,
    Initialized,
    NotificationReceived,
    Prepared,
    RequestReceived,
    ServerRules,
    State,
)
from mcpkit.protocol.apps import APPS_EXTENSION
from mcpkit.protocol.per_request import (
    CACHEABLE_METHODS,
    DEFAULT_CACHE_HINTS,
    INPUT_REQUIRED_METHODS,
    CacheHint,
)
from mcpkit.protocol.snapshot import SessionChange, SessionSnapshot, Subscribed
from mcpkit.runtime import MessageTransport, Peer, Session, SessionlessServer
from mcpkit.runtime.fanout import FanOut, FanOutEvent
from mcpkit.server import apps, mrtr
from mcpkit.server.completion import Completions
from mcpkit.server.context import Context, SessionState
from mcpkit.server.logs import ClientLogHandler, set_level
from mcpkit.server.middleware.base import Chain, Middleware
from mcpkit.server.mount import Mount
from mcpkit.server.pagination import Paginator
from mcpkit.server.prompts import Prompt, PromptOptions, PromptRegistry
from mcpkit.server.resources import (
    DirectoryOptions,
    Resource,
    ResourceOptions,
    ResourceRegistry,
    ResourceTemplate,
)
from mcpkit.server.subscriptions import SubscriptionHub
from mcpkit.server.tasks import TaskManager, TaskSettings
from mcpkit.server.tools import Tool, ToolOptions, ToolRegistry
from mcpkit.telemetry import current as current_telemetry

if TYPE_CHECKING:
    from mcpkit.server._run import (
        HTTPAppOptions,
        HTTPRunOptions,
        MCPHTTPApp,
        Serving,
        StdioRunOptions,
    )
    from mcpkit.server.files import FileDirectory
    from mcpkit.server.mount import Mount
    from mcpkit.server.request_state import RequestStateCodec, RequestStateKeys

JSONObject = dict[str, Any]
F = TypeVar("F", bound=Callable[..., Any])
Handler = Callable[[Context], "JSONObject | Prepared | Awaitable[JSONObject | Prepared]"]
Lifespan = Callable[["Server"], contextlib.AbstractAsyncContextManager[Any]]

logger = logging.getLogger("mcpkit.server")
_NONE: frozenset[str] = frozenset()
# Attributes that change what the server declares: setting one makes new serving rules.
_CONFIGURATION = frozenset(
    {"name", "version", "title", "instructions", "cache_hints", "max_requests_in_flight"}
)


class Server:
    """An MCP server.

    `instructions` tell the client how to use the server; `lifespan` is an async context
    manager factory entered once around the server's life (its value is `ctx.lifespan`);
    `page_size` splits list results into pages (None: one page).

    `max_requests_in_flight` bounds the requests one client (a connection, an HTTP session)
    has served at once: one more is answered -32000 "server busy" (None: no bound).

    Authorization (over HTTP, `http_app(auth=...)`): tools, prompts, resources, templates and
    directories may name the `scopes=` a caller's token must grant; `hide_out_of_scope` lists
    to each caller only what its token lets it use (default: lists show everything).

    `tasks` (a `TaskSettings`) says where tasks live and how many may run and be kept: tools
    registered with `task=` may run as tasks that outlive their request (docs/tasks.md).

    2026-07-28 requests: `cache` sets the ttlMs/cacheScope stamped on cacheable results,
    per method (a `CacheHint`, or an int: that ttl in ms with the method's default scope),
    over `DEFAULT_CACHE_HINTS`; `request_state_keys` (a list of secrets, newest first, or a
    `RequestStateKeys`; default: $MCPKIT_REQUEST_STATE_KEYS or a random per-process key)
    and `request_state_ttl` (seconds) seal the state of input_required rounds; `clock` (epoch
    seconds, default `time.time`) is what that ttl is measured on (a test passes a fake one).

    `middleware`: code run around every request and notification, outermost first (see
    `add_middleware`, `mcpkit.server.middleware` and docs/middleware.md).

    `telemetry=False`: no OpenTelemetry spans or metrics from this server, even with an SDK
    set up (see `mcpkit.telemetry` and docs/observability.md; `MCPKIT_OTEL=off` for a process).

    Raises ValueError for a `cache` method that is not cacheable or a bad hint.
    """

    def __init__(
        self,
        name: str,
        version: str = "0.0.0",
        *,
        instructions: str | None = None,
        title: str | None = None,
        lifespan: Lifespan | None = None,
        page_size: int | None = None,
        cache: Mapping[str, CacheHint | int] | None = None,
        request_state_keys: Sequence[bytes | str] | RequestStateKeys | None = None,
        request_state_ttl: float = 600.0,
        max_requests_in_flight: int | None = 1024,
        hide_out_of_scope: bool = False,
        tasks: TaskSettings | None = None,
        clock: Callable[[], float] = time.time,
        middleware: Sequence[Middleware] = (),
        telemetry: bool = True,
    ) -> None:
        self._telemetry = telemetry  # OpenTelemetry spans and metrics, once an SDK is set up
        self._rules: ServerRules | None = None
        self._chain: Chain | None = None  # made by the first add_middleware (none: no cost)
        self._list_versions: dict[str, int] = {}  # how often each list changed (caches)
        self.name = name
        self.version = version
        self.instructions = instructions
        self.title = title
        self.lifespan_state: Any = None
        self._lifespan = lifespan
        self._running = 0
        self._lifespan_stack: contextlib.AsyncExitStack | None = None
        self._lifespan_lock = asyncio.Lock()  # opening and closing the lifespan, one at a time
        self._sessions: weakref.WeakSet[Session] = weakref.WeakSet()
        # How often each list changed: a session compares at ready with what it started with.
        self._changes: dict[str, int] = {}
        self._declared: set[str] = set()  # features declared once: kept (see capabilities)
        self.paginator = Paginator(page_size)
        self.max_requests_in_flight = max_requests_in_flight
        self.cache_hints = cache_hints(cache)
        self._state_keys = request_state_keys
        self._state_ttl = request_state_ttl
        self._clock = clock
        self._state_codec: RequestStateCodec | None = None
        self.subscriptions = SubscriptionHub()
        # Set by an HTTP app whose workers share their clients (RedisState): what this
        # server tells all its clients, it tells the other workers' too.
        self.fanout: FanOut | None = None
        self._mounts: list[Mount] = []  # servers mounted (or imported) into this one
        self._mounted_in: list[Mount] = []  # live mounts of this server into others
        self._delivering = False  # telling our clients what another worker made
        self.tools = ToolRegistry(self.paginator, self._registry_changed)
        self.resources = ResourceRegistry(
            self.paginator, self._registry_changed, self._resource_updated
        )
        self.prompts = PromptRegistry(self.paginator, self._registry_changed)
        self.completions = Completions(self.prompts, self.resources)
        self.tasks = TaskManager(tasks, self._task_status)
        self.tools.tasks = self.tasks
        self.subscriptions.task_filter = self.tasks.followable
        self.hide_out_of_scope = hide_out_of_scope
        self.logger = logging.getLogger(f"mcpkit.server.{name}")
        self._log_handler = ClientLogHandler(self._log_sessions)
        self._handlers: dict[str, Handler] = {
            "logging/setLevel": set_level,
            "subscriptions/listen": self.subscriptions.listen,
        }
        for feature in (self.tools, self.resources, self.prompts, self.completions, self.tasks):
            self._handlers.update(feature.handlers())
        for each in middleware:
            self.add_middleware(each)

    # -- registration: tools, prompts, resources (add / remove / decorator each) --------------

    @property
    def hide_out_of_scope(self) -> bool:
        """With authorization: lists show each caller only the tools, prompts, resources and
        templates its token lets it use (False: lists show everything)."""
        return self.tools.hide_out_of_scope

    @hide_out_of_scope.setter
    def hide_out_of_scope(self, hide: bool) -> None:
        self.tools.hide_out_of_scope = self.prompts.hide_out_of_scope = hide
        self.resources.hide_out_of_scope = hide

    @overload
    def tool(self, fn: F, /) -> F: ...

    @overload
    def tool(
        self, name: str | None = None, /, **options: Unpack[ToolOptions]
    ) -> Callable[[F], F]: ...

    def tool(
        self, fn: str | F | None = None, /, **options: Unpack[ToolOptions]
    ) -> F | Callable[[F], F]:
        """Register the decorated function as a tool: `@server.tool`, `@server.tool("name")`
        or `@server.tool(title=..., ...)`; the function is returned unchanged.

        The signature becomes the inputSchema and the return annotation the outputSchema
        (`structured_output=False` turns that off); the docstring gives the description and
        the parameter descriptions. The options (`ToolOptions`, explained at `Tool`) are
        those of `add_tool`.

        Raises what `Tool` raises (ValueError, TypeError) when the function is registered.
        """
        if callable(fn):  # bare `@server.tool`
            self.add_tool(fn)
            return fn
        if fn is not None:
            options = _named(fn, options)

        def register(function: F) -> F:
            self.add_tool(function, **options)
            return function

        return register

    def add_tool(self, tool: Callable[..., Any] | Tool, /, **options: Unpack[ToolOptions]) -> Tool:
        """Register a function as a tool (options as for `@server.tool`), or a `Tool` built
        beforehand; at any time: connected clients are told.

        Raises ValueError for a name already registered, TypeError for options given with a
        `Tool` (it has its own), and what `Tool` raises; while the server runs, ValueError for
        an `app` view that is not registered.
        """
        if isinstance(tool, Tool):
            _no_options(options, "a Tool")
        else:
            tool = Tool(tool, **options)
        if self._running:  # serving already: its view must exist now (else: at start)
            apps.check_links([tool], self.resources)
        return self.tools._put(tool.name, tool)

    def remove_tool(self, name: str) -> None:
        """Remove a tool (connected clients are told). Raises KeyError for an unknown name."""
        self.tools._remove(name)

    @overload
    def prompt(self, fn: F, /) -> F: ...

    @overload
    def prompt(
        self, name: str | None = None, /, **options: Unpack[PromptOptions]
    ) -> Callable[[F], F]: ...

    def prompt(
        self, fn: str | F | None = None, /, **options: Unpack[PromptOptions]
    ) -> F | Callable[[F], F]:
        """Register the decorated function as a prompt (`@server.prompt`,
        `@server.prompt("name")` or `@server.prompt(title=..., ...)`); its parameters are the
        arguments. The function is returned unchanged; options as for `add_prompt`.

        Raises what `Prompt` raises when the function is registered."""
        if callable(fn):  # bare `@server.prompt`
            self.add_prompt(fn)
            return fn
        if fn is not None:
            options = _named(fn, options)

        def register(function: F) -> F:
            self.add_prompt(function, **options)
            return function

        return register

    def add_prompt(
        self, prompt: Callable[..., Any] | Prompt, /, **options: Unpack[PromptOptions]
    ) -> Prompt:
        """Register a function as a prompt (options: `PromptOptions`, explained at `Prompt`),
        or a `Prompt` built beforehand; at any time: connected clients are told.

        Raises ValueError for a name already registered, TypeError for options given with a
        `Prompt`, and what `Prompt` raises.
        """
        if isinstance(prompt, Prompt):
            _no_options(options, "a Prompt")
        else:
            prompt = Prompt(prompt, **options)
        return self.prompts._put(prompt.name, prompt)

    def remove_prompt(self, name: str) -> None:
        """Remove a prompt (connected clients are told). Raises KeyError for an unknown name."""
        self.prompts._remove(name)

    def resource(self, uri: str, **options: Unpack[ResourceOptions]) -> Callable[[F], F]:
        """Register the decorated function as a resource (a template when `uri` has {vars}):
        `@server.resource("data://name")`. The function is returned unchanged; options as for
        `add_resource`.

        Raises TypeError for a bare `@server.resource` (a resource needs its URI), and what
        `add_resource` raises when the function is registered.
        """
        return self.resources._decorate(uri, options)

    @overload
    def add_resource(
        self, uri: str, source: Callable[..., Any], /, **options: Unpack[ResourceOptions]
    ) -> Resource | ResourceTemplate: ...

    @overload
    def add_resource(
        self, uri: str, source: str | bytes, /, **options: Unpack[ResourceOptions]
    ) -> Resource: ...

    @overload
    def add_resource(
        self, uri: str | None, source: os.PathLike[str], /, **options: Unpack[DirectoryOptions]
    ) -> FileDirectory: ...

    def add_resource(
        self, uri: str | None, source: Any, /, **options: Any
    ) -> Resource | ResourceTemplate | FileDirectory:
        """Serve at `uri` what `source` gives (at any time: connected clients are told):

        - a function: what it returns (a template when `uri` has {variables});
        - str or bytes: that fixed content (bytes as a base64 blob); to change it, add it
          again with `replace=True` and call `server.resources.notify_updated(uri)`;
        - a `pathlib.Path` to a directory: its files, and nothing outside it, at `uri` (the
          URI prefix; None: the root's own file:// URI) + each file's relative path (see
          `mcpkit.server.files`); options: `DirectoryOptions`.

        Options: `ResourceOptions` (`size` only for a function). Raises ValueError for a
        malformed URI or template, variables that do not fit the function, or a URI already
        registered (unless `replace`); TypeError for another kind of source or an option it
        does not take; NotADirectoryError / FileNotFoundError for a bad directory.
        """
        return self.resources._add(uri, source, options)

    # -- MCP Apps views (see `mcpkit.server.apps`) -------------------------------------------

    def app(self, uri: str, **options: Unpack[apps.AppOptions]) -> Callable[[F], F]:
        """Register the decorated function (returned unchanged) as the MCP Apps view at `uri`:
        it returns the HTML; tools render in it with `@server.tool(app=uri)`. Options:
        `AppOptions` (csp, permissions, domain, prefers_border, ...). Raises what `add_app`
        raises."""

        def register(fn: F) -> F:
            self.add_app(uri, fn, **options)
            return fn

        return register

    def add_app(
        self,
        uri: str,
        source: str | os.PathLike[str] | Callable[..., Any],
        /,
        **options: Unpack[apps.AppOptions],
    ) -> Resource:
        """Serve an MCP Apps view at `uri` (a `ui://` URI): HTML text, an HTML file (read at
        each read), or a function returning the HTML. Raises ValueError for a URI that is not
        a concrete ui:// one, a bad csp domain, permission or option value, or a URI taken
        (unless `replace`); TypeError for another source or an unknown option;
        FileNotFoundError for a missing file."""
        return apps.add_app(self.resources, uri, source, options)

    def remove_resource(self, uri: str) -> None:
        """Remove a resource (by URI), or a template or directory (by its URI template, as
        listed). Raises KeyError when nothing is registered under `uri`."""
        self.resources._remove(uri)

    # -- completion -----------------------------------------------------------------------------

    def completion(self, ref_type: str, name: str, argument: str | None = None) -> Callable[[F], F]:
        """Register the decorated function (returned unchanged) as the completion provider
        for the arguments of a prompt ("ref/prompt") or the variables of a resource template
        ("ref/resource"); `argument` narrows it to one. Raises like `add_completion`."""

        def register(fn: F) -> F:
            self.add_completion(ref_type, name, fn, argument=argument)
            return fn

        return register

    def add_completion(
        self, ref_type: str, name: str, fn: Callable[..., Any], *, argument: str | None = None
    ) -> None:
        """Register `fn` as a completion provider (as `@server.completion` does).

        Raises ValueError for an unknown `ref_type` or a provider already registered, and
        TypeError for an annotation that does not resolve.
        """
        self.completions._add(ref_type, name, fn, argument)
        self._mirror_in_parents("completion")

    def remove_completion(self, ref_type: str, name: str, argument: str | None = None) -> None:
        """Remove a completion provider. Raises KeyError when none is registered so."""
        self.completions._remove(ref_type, name, argument)
        self._mirror_in_parents("completion")

    # -- middleware -----------------------------------------------------------------------------

    def add_middleware(self, middleware: Middleware) -> None:
        """Run `middleware` around every request and notification this server handles, on
        every transport and in both eras, inside those added before it (see
        `mcpkit.server.middleware` and docs/middleware.md). A mounted server's middleware
        runs inside its parent's, around its own tools, prompts and resources."""
        chain = self._chain
        if chain is None:
            chain = self._chain = Chain()
        chain.add(middleware)
        middleware.attach(self)

    @property
    def middleware(self) -> list[Middleware]:
        """The middleware added, outermost first (a copy)."""
        return [] if self._chain is None else list(self._chain.middleware)

    def list_version(self, kind: str) -> int:
        """How many times the `kind` ("tool", "prompt", "resource") list changed here (by
        this server, a mounted one, or another worker): a cache of list results is good
        while this stays the same."""
        return self._list_versions.get(kind, 0)

    # -- composition ----------------------------------------------------------------------------

    def mount(self, server: Server, prefix: str | None = None) -> None:
        """Serve `server`'s tools, prompts, resources and templates as this server's, under
        `prefix` (tools and prompts `prefix_name`, URIs `scheme://prefix/rest`), live: what it
        registers later appears here too, and its notifications reach this server's clients.
        Its handlers run with a Context of their own server and talk to this server's client.
        See `mcpkit.server.mount`.

        Raises ValueError when a prefixed name is taken here or is not a valid tool name.
        """
        self._add_mount(server, prefix, live=True)

    def import_server(self, server: Server, prefix: str | None = None) -> None:
        """Copy `server`'s tools, prompts, resources and templates here under `prefix`, once
        (later changes to it are not followed). Raises like `mount`."""
        self._add_mount(server, prefix, live=False)

    def _add_mount(self, server: Server, prefix: str | None, *, live: bool) -> None:
        mount = Mount(self, server, prefix, live=live)
        mount.sync()
        self._mounts.append(mount)
        if live:
            server._mounted_in.append(mount)

    def _mirror_in_parents(self, kind: str) -> None:
        for mount in self._mounted_in:
            mount.sync(kind)

    def _log_sessions(self) -> list[Session]:
        """Who hears this server's logger: its clients, and those of servers mounting it."""
        sessions = self.sessions()
        for mount in self._mounted_in:
            sessions += mount.parent._log_sessions()
        return sessions

    # -- serving -------------------------------------------------------------------------------

    def capabilities(self) -> JSONObject:
        """What this server declares: logging always; each feature once something is in it,
        and from then on: a session that negotiated a feature keeps it (its list answers
        empty once the last item is removed, never -32601)."""
        capabilities: JSONObject = {"logging": {}}
        declared = self._declared
        if len(self.tools) or "tools" in declared:
            capabilities["tools"] = self.tools.capability()
        if len(self.resources) or "resources" in declared:
            capabilities["resources"] = self.resources.capability()
        if len(self.prompts) or "prompts" in declared:
            capabilities["prompts"] = self.prompts.capability()
        if len(self.completions) or "completions" in declared:
            capabilities["completions"] = {}
        declared.update(capabilities)
        if apps.declares_apps(self.tools, self.resources):
            capabilities["extensions"] = {APPS_EXTENSION: {}}
        if self.tools.task_capable:
            capabilities["tasks"] = self.tasks.capability()
        return capabilities

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)
        if name in _CONFIGURATION:
            object.__setattr__(self, "_rules", None)

    def serving_rules(self) -> ServerRules:
        """The rules of the server's configuration as it is now (made again after a change)."""
        rules = self._rules
        if rules is None:
            rules = self._rules = ServerRules(self.connection_config())
        return rules

    def connection_config(self) -> ConnectionConfig:
        info: JSONObject = {"name": self.name, "version": self.version}
        if self.title is not None:
            info["title"] = self.title
        return ConnectionConfig(
            role="server",
            info=info,
            capabilities=self.capabilities(),
            instructions=self.instructions,
            cache_hints=self.cache_hints,
            max_in_flight=self.max_requests_in_flight,
        )

    async def serve(
        self, transport: MessageTransport, restored: SessionSnapshot | None = None
    ) -> None:
        """Serve one connection until the peer goes away. `restored`: a handshake-era session
        agreed earlier (by another worker sharing sessions), served from its first message as
        the worker that answered its `initialize` would (see `Connection.restore`).

        Raises ValueError (a tool's MCP Apps view is not registered), having closed the
        transport: the client is told at once."""
        try:
            apps.check_links(self.tools, self.resources)
        except ValueError:
            await transport.close()
            raise
        async with self.running():
            connection = Connection(self.connection_config(), rules=self.serving_rules)
            state = SessionState()
            if restored is not None:
                # Copies of one session on several workers each number their requests to the
                # client from their own random base, so the client's answers name one of them.
                connection.restore(restored, first_request_id=_request_numbering())
                state = SessionState.restored(restored)
            changes = self._changes.copy()  # what the client will see when it lists

            def announce_missed(event: Initialized) -> None:
                if not event.again:  # a restored session was ready (and told) all along
                    self._announce_since(session, changes)

            def changed_elsewhere(change: SessionChange) -> None:
                if type(change) is Subscribed:  # the subscribers must know the session
                    self.resources.resubscribe(session, (change.uri,))
                else:
                    state.apply(change)

            session = Session(
                connection,
                transport,
                on_request=self._serve_request,
                on_notification=self._notified,
                on_initialized=announce_missed,
                on_change=changed_elsewhere,
            )
            session.state = state
            session.traced = self._telemetry
            if restored is not None:
                self.resources.resubscribe(session, restored.subscriptions)
            self._sessions.add(session)
            started = time.perf_counter()
            try:
                await session.run()
            finally:
                self._sessions.discard(session)
                self._session_ended(session, started)

    def sessionless(self) -> SessionlessServer:
        """A server of requests that belong to no session (2026-07-28 over HTTP, stateless
        endpoints), each served by the rules of the moment; HTTP apps use one."""
        return SessionlessServer(self.serving_rules, self._serve_request)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Enter the lifespan once, however many connections are served at the same time. A
        connection that starts while the last one's lifespan is closing waits for it to end,
        then opens a new one (never a lifespan closed under it)."""
        async with self._lifespan_lock:
            if self._running == 0:
                apps.check_links(self.tools, self.resources)  # a broken view link: no start
                await self._open_lifespan()
            self._running += 1
        try:
            yield
        finally:
            async with self._lifespan_lock:
                self._running -= 1
                if self._running == 0:
                    await self._close_lifespan()

    async def _open_lifespan(self) -> None:
        stack = contextlib.AsyncExitStack()
        if self._lifespan is not None:
            self.lifespan_state = await stack.enter_async_context(self._lifespan(self))
        for mount in self._mounts:  # theirs inside ours: they may use what ours set up
            await stack.enter_async_context(mount.child.running())
        self.logger.addHandler(self._log_handler)
        self._lifespan_stack = stack

    async def _close_lifespan(self) -> None:
        stack, self._lifespan_stack = self._lifespan_stack, None
        if stack is None:
            return
        await self.tasks.aclose()
        self.logger.removeHandler(self._log_handler)
        await stack.aclose()
        self.lifespan_state = None

    def http_app(self, **options: Unpack[HTTPAppOptions]) -> MCPHTTPApp:
        """A plain ASGI app serving this server over Streamable HTTP at `path` ("/mcp").

        Mount it in Starlette/FastAPI as it is. Options (typed: see `mcpkit.transports.http.
        options.HTTPAppOptions`, and docs/http.md): path, stateless, response_mode, auth,
        max_sessions, idle_timeout, event_store, state, security (or allowed_hosts, ...),
        max_body and the other limits, http_sse, ... Raises ValueError for an option value
        out of range or a tool whose MCP Apps view is not registered, TypeError for an
        unknown option.
        """
        from mcpkit.server._run import http_app

        return http_app(self._serving(), options)

    @overload
    def run(
        self, transport: Literal["stdio"] = "stdio", **options: Unpack[StdioRunOptions]
    ) -> None: ...

    @overload
    def run(self, transport: Literal["http"], **options: Unpack[HTTPRunOptions]) -> None: ...

    def run(self, transport: str = "stdio", **options: Any) -> None:
        """Serve from the command line: `transport="stdio"` (the default) or `"http"`
        (uvicorn; `host="127.0.0.1"`, `port=8000`, `log_level`, and every option of
        `http_app`). Raises ValueError for an unknown transport or option value, or a tool
        whose MCP Apps view is not registered."""
        from mcpkit.server._run import run

        run(self._serving(), transport, options)

    def _serving(self) -> Serving:
        from mcpkit.server._run import Serving

        apps.check_links(self.tools, self.resources)  # before anything listens

        return Serving(
            self.serve,
            self.sessionless(),
            self.running,
            self.tools.header_paths,
            self.subscriptions.aclose_all,
            self.required_scopes,
            self,
            self.tasks,
            self.request_state,
        )

    def _session_ended(self, session: Session, started: float) -> None:
        otel = current_telemetry() if self._telemetry else None
        if otel is not None:
            otel.session_ended(session, started, server=True)

    def sessions(self) -> list[Session]:
        """Connected, initialized clients."""
        return [s for s in self._sessions if s.connection.state is State.READY]

    def required_scopes(self, method: str, params: JSONObject | None) -> frozenset[str]:
        """The scopes a request needs: those of the tool it calls, the prompt it gets, the
        resource it reads or subscribes to (nothing for other requests)."""
        if params is None:
            return _NONE
        if method in ("tools/call", "prompts/get"):
            registry = self.tools if method == "tools/call" else self.prompts
            name = params.get("name")
            if not registry.scoped or type(name) is not str:
                return _NONE
            found = registry.get(name)
            return _NONE if found is None else found.scopes
        if method in ("resources/read", "resources/subscribe") and self.resources.scoped:
            uri = params.get("uri")
            return self.resources.scopes_for(uri) if type(uri) is str else _NONE
        return _NONE

    async def read_resource(self, uri: str, ctx: Context) -> JSONObject:
        """Read one of this server's resources for a handler (`ctx.read_resource`).

        Raises ProtocolError (resource not found) like the resources/read request would.
        """
        return await self.resources.read(uri, ctx)

    def _serve_request(
        self, peer: Peer, request: RequestReceived
    ) -> JSONObject | Prepared | Awaitable[JSONObject | Prepared]:
        """A request, in a SERVER span when OpenTelemetry is set up (mcpkit.telemetry),
        through the middleware (if any) to `_handle_request` (which a proxy or a gateway
        overrides: their forwarding runs inside the span and the middleware too)."""
        if self._telemetry:
            otel = current_telemetry()
            if otel is not None:
                return otel.serve(peer, request, self._through_chain)
        chain = self._chain  # (as `_through_chain`, inline: one call less per request)
        if chain is None:
            return self._handle_request(peer, request)
        return chain.request(self, peer, request, self._handle_request)  # type: ignore[no-any-return]

    def _through_chain(
        self, peer: Peer, request: RequestReceived
    ) -> JSONObject | Prepared | Awaitable[JSONObject | Prepared]:
        chain = self._chain
        if chain is None:
            return self._handle_request(peer, request)
        return chain.request(self, peer, request, self._handle_request)  # type: ignore[no-any-return]

    def _notified(self, session: Session, event: NotificationReceived) -> Awaitable[None] | None:
        chain = self._chain
        if chain is None:
            return None
        return chain.notification(self, session, event.method, event.params)

    def _handle_request(
        self, peer: Peer, request: RequestReceived
    ) -> JSONObject | Prepared | Awaitable[JSONObject | Prepared]:
        handler = self._handlers.get(request.method)
        if handler is None:
            raise MethodNotFound(request.method)
        ctx = Context(self, peer, request)
        if request.envelope is None or request.method not in INPUT_REQUIRED_METHODS:
            return handler(ctx)
        # 2026-07-28 tools/call, prompts/get, resources/read: may answer input_required.
        ctx.round = mrtr.begin(ctx, self.request_state)
        return mrtr.serve(handler, ctx, self.request_state)

    def request_state(self) -> RequestStateCodec:
        """The codec sealing input_required request state (made on first use)."""
        codec = self._state_codec
        if codec is None:
            from mcpkit.server.request_state import RequestStateCodec, RequestStateKeys

            keys = self._state_keys
            if not isinstance(keys, RequestStateKeys):
                keys = RequestStateKeys(keys)
            codec = RequestStateCodec(keys, self._state_ttl, clock=self._clock)
            self._state_codec = codec
        return codec

    def _registry_changed(self, kind: str) -> None:
        self._rules = None  # a capability may have appeared
        self._changes[kind] = self._changes.get(kind, 0) + 1
        self._list_changed(kind)
        self._fan_out(("list_changed", kind))
        self._mirror_in_parents(kind)

    def _list_changed(self, kind: str) -> None:
        self._list_versions[kind] = self._list_versions.get(kind, 0) + 1
        self.subscriptions.publish(f"notifications/{kind}s/list_changed")
        for session in self.sessions():
            _notify_list_changed(session, kind)

    def _resource_updated(self, uri: str, match: Callable[[str], bool] | None) -> int:
        sent = self.subscriptions.resource_updated(uri, match)
        self._fan_out(("resource_updated", uri))  # called once per notify_updated
        for mount in self._mounted_in:
            mount.resource_updated(uri)
        return sent

    def _task_status(self, task_id: str, task: JSONObject) -> int:
        sent = self.subscriptions.task_status(task_id, task)
        self._fan_out(("task_status", task_id, task))
        return sent

    def _fan_out(self, event: FanOutEvent) -> None:
        if self.fanout is not None and not self._delivering:
            self.fanout.publish(event)

    def deliver(self, event: FanOutEvent) -> None:
        """Tell this process's clients what another worker's server told its own (a list
        changed, a resource was updated, a task moved); see `mcpkit.runtime.fanout`. An event
        of an unknown kind is ignored (a newer worker's)."""
        self._delivering = True
        try:
            kind = event[0]
            if kind == "list_changed" and event[1] in ("tool", "prompt", "resource"):
                self._list_changed(event[1])
            elif kind == "resource_updated" and type(event[1]) is str:
                self.resources.notify_updated(event[1])
            elif kind == "task_status" and type(event[2]) is dict:
                self.subscriptions.task_status(str(event[1]), event[2])
        finally:
            self._delivering = False

    def _announce_since(self, session: Session, seen: Mapping[str, int]) -> None:
        """A session just became ready: announce the lists that changed while its handshake
        was finishing (it was not ready then, so `_registry_changed` skipped it; an
        in-process client is ready before the server reads its initialized)."""
        for kind, count in self._changes.items():
            if count != seen.get(kind, 0):
                _notify_list_changed(session, kind)


def _request_numbering() -> int:
    # Below 2**53: a JavaScript client reads the id back exactly.
    return 2**40 + secrets.randbelow(2**52)


def _notify_list_changed(session: Session, kind: str) -> None:
    capability = session.connection.config.capabilities.get(f"{kind}s", {})
    if capability.get("listChanged"):
        session.notify(f"notifications/{kind}s/list_changed")


def _named(name: str, options: Mapping[str, Any]) -> Any:
    """The options of `@server.tool("name", ...)` with the positional name among them.
    Raises TypeError when the name is given twice."""
    if "name" in options:
        raise TypeError(f"the name is given twice: {name!r} and name={options['name']!r}")
    return {**options, "name": name}


def _no_options(options: Mapping[str, Any], what: str) -> None:
    if options:
        raise TypeError(f"{what} has its options already; got {', '.join(sorted(options))}")


def cache_hints(cache: Mapping[str, CacheHint | int] | None) -> dict[str, CacheHint]:
    """`cache` (method -> CacheHint or a ttl in ms) over the default hints.

    Raises ValueError for a method whose results carry no cache hints, a ttl that is not a
    non-negative int, or a scope other than public/private.
    """
    hints = dict(DEFAULT_CACHE_HINTS)
    for method, given in (cache or {}).items():
        if method not in CACHEABLE_METHODS:
            known = ", ".join(sorted(CACHEABLE_METHODS))
            raise ValueError(f"{method!r} results are not cacheable; cacheable: {known}")
        if type(given) is int:
            hints[method] = CacheHint(given, DEFAULT_CACHE_HINTS[method].scope)
        elif isinstance(given, CacheHint):
            hints[method] = given
        else:
            raise ValueError(
                f"cache[{method!r}] must be a CacheHint or a ttl in ms (an int), not {given!r}; "
                "cacheable results always carry a hint (0 means do not cache)"
            )
    return hints
