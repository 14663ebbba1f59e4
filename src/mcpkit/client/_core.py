"""The era-neutral engine under `Client`: connecting, settling the era, sending requests.

`ClientCore` opens the transport and session, runs the era selection (`era.py`), and owns the
request pipeline every typed method goes through: the response cache and the log level in
the per-request era, and the input_required rounds (`mrtr.py`). `client.py` adds one typed method
per MCP request on top; see its notes for the decisions behind both.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from types import EllipsisType, TracebackType
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from mcpkit import telemetry
from mcpkit.client._targets import StdioOptions, is_url, open_transport, with_auth
from mcpkit.client.cache import ResponseCache
from mcpkit.client.era import (
    Chosen,
    Reprobe,
    check_mode,
    choose_era,
    server_key,
)
from mcpkit.client.handlers import (
    Elicitation,
    Sampling,
    ServerRequests,
    validation_summary,
)
from mcpkit.client.listen import Listeners
from mcpkit.client.mrtr import (
    InputMode,
    InputRequired,
    InputRequiredError,
    answer_all,
    pending_input,
    result_kind,
    retry_params,
)
from mcpkit.client.notifications import (
    ListKind,
    Notifications,
)
from mcpkit.client.options import ClientOptions
from mcpkit.client.resume import (
    OpenedSession,
    ResumableTransport,
    resume_base,
)
from mcpkit.client.tasks import (
    TaskHandle,
    TaskState,
    answered_with_task,
    created_task,
    needs_task_param,
    start_tool,
    wire_result,
)
from mcpkit.client.tool_catalog import ToolCatalog
from mcpkit.errors import (
    URL_ELICITATION_REQUIRED,
    InvalidResult,
    LocalProtocolViolation,
    ProtocolError,
    URLElicitationRequired,
)
from mcpkit.protocol import Connection, ConnectionConfig, Timeout
from mcpkit.protocol.apps import APP_MIME_TYPE, APPS_EXTENSION
from mcpkit.protocol.lifecycle import has_capability
from mcpkit.protocol.per_request import CACHEABLE_METHODS, LOG_LEVEL, LOG_LEVELS
from mcpkit.protocol.tasks import EXTENSION as TASKS_EXTENSION
from mcpkit.runtime import ProgressCallback, Session
from mcpkit.types.eras import Era
from mcpkit.types.versions import PER_REQUEST_VERSIONS

if TYPE_CHECKING:
    pass

JSONObject = dict[str, Any]
M = TypeVar("M")
logger = logging.getLogger("mcpkit.client")

DEFAULT_CACHE_ENTRIES = 512
_MAX_TIMEOUT = 3600.0


class ClientCore:
    """Connection, era and request pipeline of a `Client` (use `Client`)."""

    def __init__(self, target: Any, options: ClientOptions) -> None:
        mode, protocol_version = options.mode, options.protocol_version
        if mode is None and protocol_version is not None:
            # A pinned revision pins its era too.
            if protocol_version in PER_REQUEST_VERSIONS:
                mode, protocol_version = protocol_version, None
            else:
                mode = Era.HANDSHAKE
        if mode is None:
            mode = "auto" if server_key(target) is not None else Era.HANDSHAKE
        self._mode = check_mode(mode)
        self.options = options
        self._probe_timeout = options.probe_timeout
        self.max_input_rounds = options.max_input_rounds
        self._target = target
        self._protocol_version = protocol_version
        self._info: JSONObject = {"name": options.name, "version": options.version}
        self._timeout = _timeout(options.timeout)
        self._stdio = StdioOptions(env=options.env, cwd=options.cwd, stderr=options.stderr)
        http, auth = options.http, options.auth
        self._http = with_auth(target, http, auth) if auth is not None else http
        sampling, elicitation = options.sampling, options.elicitation
        if sampling is not None and not isinstance(sampling, Sampling):
            sampling = Sampling(sampling)
        if elicitation is not None and not isinstance(elicitation, Elicitation):
            elicitation = Elicitation(elicitation)
        self._requests = ServerRequests(sampling, elicitation, options.roots)
        self._notifications = Notifications(
            on_log=options.on_log,
            on_list_changed=options.on_list_changed,
            on_resource_updated=options.on_resource_updated,
            on_notification=options.on_notification,
            list_changed=self._list_changed,
        )
        self.max_pages = options.max_pages
        self._session: Session | None = None
        self._opened_at: float | None = None
        self._chosen: Chosen | None = None
        self._log_level: str | None = None  # per-request era: stamped on every request
        self._cache: ResponseCache | None = None  # in the per-request era, unless cache=False
        self._use_cache = options.cache
        self._clock = options.clock  # the cache's freshness (ttlMs)
        self._catalog = ToolCatalog()  # what tools/list said (schemas, header paths)
        self._headers_matter = False  # 2026-07-28 over HTTP: a call's headers need its tool
        self._listeners = Listeners()

    async def __aenter__(self) -> Self:
        key = server_key(self._target)
        mode = self._mode
        for attempt in range(2):
            session = await self._open()
            try:
                self._chosen = await choose_era(
                    session,
                    mode=mode,
                    key=key,
                    probe_timeout=self._probe_limit(key),
                    init_timeout=self._timeout,
                    handshake_version=self._protocol_version,
                    retry=attempt == 0,
                )
            except Reprobe as again:
                await session.close()
                mode = again.mode
                continue
            except BaseException:
                await session.close()
                raise
            break
        self._session = session
        self._opened_at = time.perf_counter()  # mcp.client.session.duration
        assert self._chosen is not None  # the second attempt probes: no Reprobe
        if self._chosen.era is Era.PER_REQUEST:
            self._headers_matter = is_url(self._target)
            if self._use_cache:
                self._cache = ResponseCache(DEFAULT_CACHE_ENTRIES)
        return self

    async def resume(self, session: OpenedSession) -> Self:
        """Connect (instead of `async with`) to a handshake-era HTTP session another process
        opened and described with `opened_session`: no `initialize` is sent, so the server
        sees one session. This client numbers its requests from a random base of its own
        (ids never collide with the other process's in that session). Close it with `close`
        (ends the session on the server) or `detach` (leaves it for another process).

        Raises ValueError for a target that is not an http(s) URL, LocalProtocolViolation for
        an InitializeResult this client cannot go on with (a revision it does not speak).
        """
        if not is_url(self._target):
            raise ValueError("only a session over Streamable HTTP can be resumed")
        opened = await self._open()
        try:
            opened.connection.resume(session.initialize_result, first_request_id=resume_base())
            version = opened.connection.protocol_version
            assert version is not None  # resume agreed one, or raised
            cast(ResumableTransport, opened.transport).resume_session(session.session_id, version)
        except BaseException:
            await opened.close()
            raise
        self._session = opened
        self._chosen = Chosen(Era.HANDSHAKE, version)
        return self

    def opened_session(self) -> OpenedSession | None:
        """What `resume` needs to go on with this client's session in another process: the
        session id and the InitializeResult of a handshake-era Streamable HTTP session; None
        for any other (stdio, in process, 2026-07-28, the HTTP+SSE fallback)."""
        chosen, session = self._chosen, self._session
        if chosen is None or session is None or chosen.era is not Era.HANDSHAKE:
            return None
        session_id = getattr(session.transport, "session_id", None)
        if not isinstance(session_id, str):
            return None
        if chosen.initialized is not None:
            return OpenedSession(session_id, chosen.initialized.result)
        return OpenedSession(session_id, _initialize_result(session.connection, chosen.version))

    async def detach(self) -> None:
        """Close this client but leave its HTTP session on the server (no DELETE): another
        process goes on with it (`resume`). For any other session, the same as `close`."""
        session = self._session
        if session is not None and hasattr(session.transport, "keep_session"):
            cast(ResumableTransport, session.transport).keep_session()
        await self.close()

    def _ack_timeout(self) -> float | None:
        return self._timeout.timeout if self._timeout is not None else None

    def _probe_limit(self, key: str | None) -> float | None:
        """How long server/discover is waited for alone before `initialize` joins it (stdio
        and in-process: `probe_timeout`); the era is then decided by whichever answers first,
        within the client's timeout (era.py).

        None over HTTP: an HTTP server always answers the POST and the era is read from that
        answer, so silence is a slow server (a cold start), not a handshake-era one."""
        if key is not None and key.startswith(("http://", "https://")):
            return None
        return self._probe_timeout

    async def _open(self) -> Session:
        transport = await open_transport(
            self._target, self._stdio, self._http, self._catalog.header_paths_for
        )
        # At 2026-07-28 every request declares the tasks extension: `call_tool` follows a
        # task to its end (tasks.py), so a server may always answer with one.
        extensions: JSONObject = {TASKS_EXTENSION: {}}
        if self.options.apps:  # the application renders MCP Apps views
            extensions[APPS_EXTENSION] = {"mimeTypes": [APP_MIME_TYPE]}
        capabilities = {**self._requests.capabilities(), "extensions": extensions}
        config = ConnectionConfig(role="client", info=self._info, capabilities=capabilities)
        traced = self.options.telemetry
        session = Session(
            Connection(config),
            transport,
            on_request=self._traced_requests if traced else self._requests,
            on_notification=self._on_notification,
        )
        session.traced = traced
        session.start()
        return session

    def _traced_requests(self, peer: Any, event: Any) -> Any:
        """The server's requests (sampling, elicitation, roots), each in a SERVER span when
        OpenTelemetry is set up (mcpkit.telemetry)."""
        otel = telemetry.current()
        if otel is None:
            return self._requests(peer, event)
        return otel.serve(peer, event, self._requests)

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
        self._catalog.close()
        self._listeners.end_all()
        if self._session is not None:
            session, self._session = self._session, None
            await session.close()
            self._session_ended(session)

    def _session_ended(self, session: Session) -> None:
        otel = telemetry.current() if self.options.telemetry else None
        if otel is not None and self._opened_at is not None:
            otel.session_ended(session, self._opened_at, server=False)

    async def wait_closed(self) -> str:
        """Wait until the connection ends (a stdio server exited, the transport closed, or
        `close()`); why it ended. Returns at once when the client is not connected."""
        session = self._session
        return "not connected" if session is None else await session.wait_closed()

    def _list_changed(self, kind: ListKind) -> None:
        """A list_changed notification arrived: tool definitions belong to the last list."""
        if kind == "tools":
            self._catalog.forget()

    # -- what the server said about itself ---------------------------------------------------

    @property
    def _era(self) -> Chosen:
        if self._chosen is None or self._session is None:
            raise RuntimeError("the client is not connected; use `async with Client(...)`")
        return self._chosen

    @property
    def era(self) -> Era:
        """`Era.PER_REQUEST` ("per-request": 2026-07-28 on, no handshake, every request
        carries its envelope) or `Era.HANDSHAKE` ("handshake": `initialize` agreed the
        revision). A `str` enum: compare with either. Raises RuntimeError when not connected."""
        return self._era.era

    @property
    def server_info(self) -> JSONObject:
        """The server's `serverInfo` (name, version, title, ...) as it sent it (per-request: from
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
        """The revision in use: agreed at initialize, or the per-request era's revision."""
        return self._era.version

    @property
    def discovered(self) -> JSONObject | None:
        """Per-request era: the server's `server/discover` result as sent (None in the
        handshake era)."""
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
        input_required: InputMode = "answer",
    ) -> JSONObject:
        """Send any request and return its raw result dict.

        `timeout`: seconds (or a `Timeout`; None waits forever; default: the client's).
        `on_progress(progress, total, message)` receives the server's progress and asks for it.
        Cancelling the awaiting task cancels the request (stdio: `notifications/cancelled`;
        per-request HTTP: its response stream is closed).

        Per-request servers: an `input_required` result (tools/call, prompts/get, resources/read)
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
        if not session.connection.per_request or result_kind(method, raw) != "input_required":
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
        cache = self._cache
        if cache is None or method not in CACHEABLE_METHODS or not _plain(params):
            cache = None  # only plain requests for cacheable results (never a retry)
        else:
            hit = cache.get(method, params, now=self._clock())
            if hit is not None:
                return hit
        sent = params
        if self._log_level is not None and session.connection.per_request:
            sent = _with_meta(params, {LOG_LEVEL: self._log_level})
        try:
            raw = await session.request(method, sent, timeout=limit, on_progress=on_progress)
        except ProtocolError as exc:
            if exc.code == URL_ELICITATION_REQUIRED and type(exc) is ProtocolError:
                raise URLElicitationRequired(exc.message, exc.data) from None
            raise
        if cache is not None and raw.get("resultType", "complete") == "complete":
            cache.put(method, params, raw, now=self._clock())
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
            if result_kind(method, raw) != "input_required":
                return raw  # complete, or a task (answered with the task, tasks.py)
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

    async def _typed(self, kind: type[M], method: str, params: JSONObject | None = None) -> M:
        return _parse(kind, await self.request(method, params), method)

    async def _typed_or_pending(
        self,
        kind: type[M],
        method: str,
        params: JSONObject,
        input_required: InputMode,
        *,
        timeout: float | Timeout | EllipsisType | None = ...,
        on_progress: ProgressCallback | None = None,
    ) -> M | InputRequired:
        raw = await self.request(
            method, params, timeout=timeout, on_progress=on_progress, input_required=input_required
        )
        if raw.get("resultType") == "input_required":
            return pending_input(method, params, raw)
        if answered_with_task(params, raw):
            # The server runs it as a task: follow it to its end (tasks.py); each new status
            # message reaches on_progress as (n, None, message).
            handle = TaskHandle(self, created_task(method, raw))
            raw = await wire_result(
                handle, None if on_progress is None else _as_progress(on_progress)
            )
        return _parse(kind, raw, method)

    def _must_be_task(self, name: str) -> bool:
        return needs_task_param(self, self._catalog.tools.get(name))

    # -- tasks -------------------------------------------------------------------------------

    async def start_tool(
        self, name: str, arguments: JSONObject | None = None, *, ttl: float | None = None
    ) -> TaskHandle:
        """Call a tool as a task and return its handle at once (`status()`, `result()`,
        `cancel()`, `async for state in handle`; see `mcpkit.client.tasks`).

        2025-11-25: the call asks for a task (`ttl` in seconds: how long the server should
        keep it); 2026-07-28: the server decides, and a call it answers at once gives a
        handle that is already done. Raises CapabilityNotDeclared when the server cannot
        run tool calls as tasks (its revision or capabilities), ProtocolError (-32601: this
        tool cannot run as a task), and what `request` raises.
        """
        return await start_tool(self, name, arguments or {}, ttl)

    def task(self, task_id: str) -> TaskHandle:
        """A handle on a task this caller started earlier (here, in another client or another
        process), by its id; `await handle.status()` checks the server still has it."""
        return TaskHandle.attach(self, task_id)

    async def ping(self) -> None:
        """Check the server answers. Per-request servers have no `ping`: a `server/discover` (not
        from the cache) stands in for it."""
        session = self._session
        if session is not None and session.connection.per_request:
            await session.request("server/discover", None, timeout=self._timeout)
            return
        await self.request("ping")

    async def set_logging_level(self, level: str) -> None:
        """Ask for log messages at `level` and above; see `on_log`.

        Handshake era: `logging/setLevel`. Per-request era: nothing is sent; the level is
        recorded and stamped on every later request (`_meta` `io.modelcontextprotocol/logLevel`),
        and the server logs on the response stream of each request.
        """
        if level not in LOG_LEVELS:
            raise ValueError(f"unknown log level {level!r}; use one of {', '.join(LOG_LEVELS)}")
        session = self._session
        if session is not None and session.connection.per_request:
            self._log_level = level
            return
        await self.request("logging/setLevel", {"level": level})

    def _handshake_only(self, method: str, instead: str) -> None:
        if self._connected().connection.per_request:
            raise LocalProtocolViolation(
                f"{method} does not exist in protocol {self.protocol_version}; use "
                f"client.{instead} (works with servers of either era)"
            )

    def _connected(self) -> Session:
        if self._session is None:
            raise RuntimeError("the client is not connected; use `async with Client(...)`")
        return self._session


def _as_progress(on_progress: ProgressCallback) -> Callable[[TaskState], Any]:
    """A task's states as progress: each new status message, numbered."""
    seen: list[str] = []

    def on_state(state: TaskState) -> Any:
        message = state.status_message
        if message is None or (seen and seen[-1] == message):
            return None
        seen.append(message)
        return on_progress(len(seen), None, message)

    return on_state


def _timeout(timeout: float | Timeout | None) -> Timeout | None:
    if timeout is None or isinstance(timeout, Timeout):
        return timeout
    return Timeout(timeout, reset_on_progress=True, maximum=max(_MAX_TIMEOUT, timeout))


def _plain(params: JSONObject | None) -> bool:
    """A request the cache may answer: not an input-required retry."""
    return not params or ("inputResponses" not in params and "requestState" not in params)


def _with_meta(params: JSONObject | None, extra: JSONObject) -> JSONObject:
    params = dict(params or {})
    own = params.get("_meta")
    params["_meta"] = {**extra, **own} if isinstance(own, dict) else extra
    return params


def _parse(kind: type[M], raw: JSONObject, method: str) -> M:
    from pydantic import ValidationError

    try:
        return kind.from_wire(raw)  # type: ignore[attr-defined, no-any-return]
    except ValidationError as exc:
        raise InvalidResult(method, validation_summary(exc)) from None


def _initialize_result(connection: Connection, version: str) -> JSONObject:
    """A resumed session's InitializeResult, from what its connection holds."""
    result: JSONObject = {
        "protocolVersion": version,
        "capabilities": connection.peer_capabilities or {},
        "serverInfo": connection.peer_info or {},
    }
    if connection.instructions is not None:
        result["instructions"] = connection.instructions
    return result
