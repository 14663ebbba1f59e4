"""`Context`: what a handler may know and do about the request it is serving.

One is made per request (cheap: a few references). A tool gets it by declaring a parameter
annotated `Context`; built-in handlers always get it. The calls that ask the client for
something (`sample`, `elicit`, `elicit_url`, `list_roots`, `gather_input`) are requests the
server sends in the handshake era; for a 2026-07-28 request the same calls become an
input-required answer (see `mrtr`), so handler code does not change between eras.

A context knows its request's era: `envelope` is set for a 2026-07-28 request (which carries
its protocol version, client capabilities, client info, log level and trace context in
`params._meta`), None for a request on an initialized (handshake) connection.

A context sees the client through a `Peer` (a session, or one sessionless request) and the
server through the narrow `ServerView`: never a transport, never the whole `Server`.
"""

from __future__ import annotations

import asyncio
import inspect
import secrets
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar, Unpack, cast

from mcpkit.errors import CapabilityNotDeclared
from mcpkit.protocol import RequestReceived
from mcpkit.protocol.per_request import INPUT_REQUIRED_METHODS, LOG_LEVELS, Envelope
from mcpkit.protocol.snapshot import (
    LogLevelSet,
    SessionChange,
    SessionSnapshot,
    Subscribed,
    Unsubscribed,
)
from mcpkit.runtime import Peer, Principal
from mcpkit.server.asks import (
    Ask,
    Round,
    cannot_ask,
    needs_form_elicitation,
    needs_roots,
    needs_url_elicitation,
    sampling_needs,
)
from mcpkit.server.elicitation import Elicited, parse_answer, requested_schema
from mcpkit.server.hints import names_context
from mcpkit.server.sampling import SamplingOptions, sampling_params
from mcpkit.types.deprecation import warn_deprecated
from mcpkit.types.eras import Era

if TYPE_CHECKING:
    from mcpkit.types import (
        CreateMessageResult,
        ElicitResult,
        ReadResourceResult,
        Root,
        SamplingMessage,
    )

JSONObject = dict[str, Any]
T = TypeVar("T")
LogLevel = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
_SEVERITY = {level: rank for rank, level in enumerate(LOG_LEVELS)}
_TRACE_KEYS = ("traceparent", "tracestate", "baggage")


@dataclass(slots=True)
class SessionState:
    """What the server remembers about one connected client beyond what its connection
    agreed (revision, capabilities, info: `Connection`). Changed only by `apply`, with the
    change the handler also tells the session (`Session.changed`), so another process
    serving the session makes the same change with the same call."""

    log_level: LogLevel | None = None  # None: the client has not asked for log messages
    subscriptions: set[str] = field(default_factory=set)
    # Whom its tasks belong to when there is no principal (random: never guessable).
    key: str = field(default_factory=lambda: "session:" + secrets.token_urlsafe(16))

    def wants_log(self, level: LogLevel) -> bool:
        return self.log_level is not None and _SEVERITY[level] >= _SEVERITY[self.log_level]

    def apply(self, change: SessionChange) -> None:
        if isinstance(change, LogLevelSet):
            self.log_level = cast("LogLevel", change.level)
        elif isinstance(change, Subscribed):
            self.subscriptions.add(change.uri)
        elif isinstance(change, Unsubscribed):
            self.subscriptions.discard(change.uri)

    def snapshot(self, agreed: SessionSnapshot) -> SessionSnapshot:
        """`agreed` (what the connection agreed at initialize) with this state."""
        subscriptions = tuple(sorted(self.subscriptions))
        return replace(agreed, log_level=self.log_level, subscriptions=subscriptions)

    @classmethod
    def restored(cls, snapshot: SessionSnapshot) -> SessionState:
        """The state of a session rebuilt from `snapshot` (subscriptions: `apply` each)."""
        return cls(log_level=cast("LogLevel | None", snapshot.log_level))


class ServerView(Protocol):
    """What a `Context` needs of the server that serves it."""

    @property
    def lifespan_state(self) -> Any: ...

    def capabilities(self) -> JSONObject:
        """What the server declares now."""
        ...

    async def read_resource(self, uri: str, ctx: Context) -> JSONObject: ...


class RunningTask(Protocol):
    """The task a handler runs in, as its Context sees it (`server.tasks.TaskRun`)."""

    @property
    def task_id(self) -> str: ...

    async def gather(self, ctx: Context, asks: tuple[Ask, ...]) -> list[Any]:
        """Ask the client, the way the task's era asks inside a task."""
        ...

    async def note(self, message: str) -> None:
        """Make `message` the task's statusMessage."""
        ...


class TaskSwitchLike(Protocol):
    """What lets an inline call become a task: `server.tasks.TaskSwitch`, seen from here."""

    @property
    def future(self) -> asyncio.Future[JSONObject]: ...

    async def switch(self, ctx: Context, message: str | None) -> bool: ...


class Context:
    """The request being served: who asked, what they declared, and ways to talk back."""

    __slots__ = ("peer", "request", "round", "server", "task", "task_switch")

    def __init__(
        self,
        server: ServerView,
        peer: Peer,
        request: RequestReceived,
        round: Round | None = None,
    ) -> None:
        self.server = server
        self.peer = peer  # the client: a session, or this one sessionless request
        self.request = request
        # A 2026-07-28 request that may answer input_required: the answers it carried (None in a
        # first round until the handler asks).
        self.round = round
        # The task this handler runs in (see `server.tasks`), and, for an inline call that
        # may become one, the future that answers the request with the task.
        self.task: RunningTask | None = None
        self.task_switch: TaskSwitchLike | None = None

    # -- facts -----------------------------------------------------------------------------

    @property
    def request_id(self) -> str | int:
        return self.request.id

    @property
    def params(self) -> JSONObject:
        return self.request.params or {}

    @property
    def envelope(self) -> Envelope | None:
        """What a 2026-07-28 request says about itself; None in the handshake era."""
        return self.request.envelope

    @property
    def era(self) -> Era:
        """`Era.PER_REQUEST` for a 2026-07-28 request (no handshake; its envelope rules),
        `Era.HANDSHAKE` for a request in an `initialize`d session."""
        return Era.HANDSHAKE if self.request.envelope is None else Era.PER_REQUEST

    @property
    def modern(self) -> bool:
        """Deprecated (issue 23: eras are named by mechanism): `ctx.era is Era.PER_REQUEST`."""
        warn_deprecated("ctx.modern is deprecated; use ctx.era is mcpkit.Era.PER_REQUEST")
        return self.request.envelope is not None

    @property
    def protocol_version(self) -> str | None:
        """The request's revision (2026-07-28 on), else the connection's negotiated one."""
        envelope = self.request.envelope
        if envelope is not None:
            return envelope.version
        return self.peer.protocol_version

    @property
    def client_info(self) -> JSONObject:
        """The client's self-reported name and version (for display and logs, never trust)."""
        envelope = self.request.envelope
        if envelope is not None:
            return envelope.client_info or {}
        return self.peer.peer_info or {}

    @property
    def client_capabilities(self) -> JSONObject:
        """What the client declared: in this request's envelope, or at initialize."""
        envelope = self.request.envelope
        if envelope is not None:
            return envelope.capabilities
        return self.peer.peer_capabilities or {}

    @property
    def trace(self) -> JSONObject:
        """OpenTelemetry context the request carried in `_meta` (traceparent, tracestate,
        baggage; only those present; {} without any). Read for either era."""
        envelope = self.request.envelope
        if envelope is not None:
            return dict(envelope.trace) if envelope.trace else {}
        meta = self.params.get("_meta")
        if type(meta) is not dict:
            return {}
        return {k: meta[k] for k in _TRACE_KEYS if type(meta.get(k)) is str}

    @property
    def principal(self) -> Principal | None:
        """Who is calling, as the transport authenticated them (None without authorization):
        subject, client id, scopes and claims of the verified token. Request state
        (input_required rounds) is bound to it: a state issued to one principal is refused
        for another."""
        return self.peer.principal

    @property
    def state(self) -> SessionState | None:
        """This client's session state (log level, subscriptions); None for a request that
        belongs to no session (2026-07-28, or a stateless endpoint)."""
        return self.peer.state  # type: ignore[no-any-return]

    @property
    def lifespan(self) -> Any:
        """Whatever the server's lifespan context manager yielded (None without one)."""
        return self.server.lifespan_state

    @property
    def task_id(self) -> str | None:
        """The id of the task this call runs as (None for an inline call)."""
        task = self.task
        return None if task is None else task.task_id

    @property
    def cancelled(self) -> bool:
        """True once the client cancelled this request (the handler task is being cancelled)."""
        task = asyncio.current_task()
        return task is not None and task.cancelling() > 0

    # -- talking back ----------------------------------------------------------------------

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> bool:
        """Progress for this request; False when the client did not ask for progress.

        Inside a task the progress becomes the task's statusMessage (what `tasks/get` shows:
        the message, else "progress/total"), and True is returned once stored.

        Raises LocalProtocolViolation when `progress` does not increase.
        """
        task = self.task
        if task is not None:
            if message is None:
                message = f"{progress:g}/{total:g}" if total is not None else f"{progress:g}"
            await task.note(message)
            return True
        return self.peer.report_progress(self.request.id, progress, total, message)

    async def continue_as_task(self, message: str | None = None) -> bool:
        """Answer this tools/call with a task now and go on running in it (the rest of the
        handler runs in the background; the client polls the task for the result).

        For a tool registered with `task=` whose call did not start as a task (`task_if`
        said no): typically after asking the user in input_required rounds (2026-07-28),
        before the long part. `message` becomes the task's statusMessage. True when the
        call now runs as a task (or already did); False when it cannot become one (the
        client did not declare tasks, the tool has no `task=`): it goes on inline.
        """
        if self.task is not None:
            return True
        switch = self.task_switch
        if switch is None or switch.future.done():
            return False
        return await switch.switch(self, message)

    async def log(self, level: LogLevel, data: Any, logger: str | None = None) -> bool:
        """Send a log message to the client if it asked for this level; True when sent.

        Handshake era: the level the client set with logging/setLevel. A 2026-07-28
        request: the `logLevel` in its envelope; none there means no message at all.
        """
        if not self.wants_log(level):  # logging is always declared
            return False
        params: JSONObject = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        self.peer.notify("notifications/message", params, related_id=self.request.id)
        return True

    def wants_log(self, level: LogLevel) -> bool:
        """Whether a message at `level` would reach the client for this request."""
        envelope = self.request.envelope
        if envelope is None:
            state: SessionState | None = self.peer.state
            return state is not None and state.wants_log(level)
        wanted = envelope.log_level
        return wanted is not None and _SEVERITY[level] >= _SEVERITY[wanted]

    async def debug(self, data: Any) -> bool:
        return await self.log("debug", data)

    async def info(self, data: Any) -> bool:
        return await self.log("info", data)

    async def warning(self, data: Any) -> bool:
        return await self.log("warning", data)

    async def error(self, data: Any) -> bool:
        return await self.log("error", data)

    async def read_resource(self, uri: str) -> ReadResourceResult:
        """Read one of this server's own resources: a `mcpkit.types.ReadResourceResult`, the
        model the client's `read_resource` returns (`.contents[0].text`); reading it as a dict,
        as before, still answers for one release with a DeprecationWarning.

        Raises ProtocolError (resource not found) like the resources/read request would.
        """
        return _read(await self.server.read_resource(uri, self))

    def close_sse_stream(self) -> bool:
        """Streamable HTTP (2025-11-25, with an event store): end this request's SSE stream
        now; the client resumes it with GET + Last-Event-ID and nothing is lost. Useful to
        free a connection during a long wait. False when the transport cannot (stdio, no
        event store, not streaming)."""
        return self.peer.close_stream(self.request.id)

    # -- asking the client -----------------------------------------------------------------

    async def sample(
        self,
        messages: list[SamplingMessage | JSONObject] | str,
        *,
        key: str | None = None,
        **options: Unpack[SamplingOptions],
    ) -> CreateMessageResult:
        """Ask the client's LLM for a completion (sampling/createMessage).

        `messages` may be a plain string (one user message). The options (`SamplingOptions`:
        max_tokens=1024, system_prompt, temperature, stop_sequences, model_preferences,
        include_context, metadata, tools, tool_choice, meta) are the request's params in
        Python's spelling. Returns the client's answer as a `mcpkit.types.CreateMessageResult`
        (`.content`, `.model`, `.stop_reason`). `key` names the ask's InputRequest at
        2026-07-28 (default: generated, "sample-N"); the handshake era ignores it.

        Raises CapabilityNotDeclared when the client offers no sampling (handshake era),
        ProtocolError -32021 (2026-07-28), InvalidResult for an answer that is not a
        CreateMessageResult, ValueError for a key already asked in this request, TypeError
        for an unknown option. See `mrtr` for how asking works at 2026-07-28.
        """
        (result,) = await self.gather_input(self._sampling(messages, key, options))
        return result  # type: ignore[no-any-return]

    async def elicit(
        self, message: str, schema: type[T] | JSONObject, *, key: str | None = None
    ) -> Elicited[T]:
        """Ask the user for structured input (form mode).

        `schema` is a pydantic model, dataclass or TypedDict (the answer comes back as an
        instance) or a JSON Schema dict (the answer comes back as a dict). `key` names the
        ask's InputRequest at 2026-07-28 (default "elicit-N"; unused in the handshake era).
        Raises CapabilityNotDeclared without the client's elicitation capability (-32021 at
        2026-07-28), ValueError for a schema forms cannot carry, an answer that does not
        fit it or a key already asked in this request.
        """
        (result,) = await self.gather_input(self.elicit_request(message, schema, key=key))
        return result  # type: ignore[no-any-return]

    async def elicit_url(
        self, message: str, url: str, elicitation_id: str, *, key: str | None = None
    ) -> ElicitResult:
        """Send the user to a URL (URL mode elicitation, 2025-11-25 on); `key` as for
        `elicit`. Returns the client's answer as a `mcpkit.types.ElicitResult` (`.action`).
        Raises like `elicit`, and InvalidResult for an answer that is not an ElicitResult."""
        (result,) = await self.gather_input(
            self.elicit_url_request(message, url, elicitation_id, key=key)
        )
        return result  # type: ignore[no-any-return]

    async def list_roots(self, *, key: str | None = None) -> list[Root]:
        """The client's roots (roots/list), as `mcpkit.types.Root` models (`.uri`, `.name`);
        `key` as for `elicit` (default "roots-N"). Raises CapabilityNotDeclared without the
        client's roots capability (-32021 at 2026-07-28), InvalidResult for a malformed
        answer."""
        (result,) = await self.gather_input(self.roots_request(key=key))
        return result  # type: ignore[no-any-return]

    async def gather_input(self, *asks: Ask) -> list[Any]:
        """Ask several things at once; their parsed answers, in order.

        Build the asks with `sample_request`, `elicit_request`, `elicit_url_request` and
        `roots_request`. In the handshake era they are sent concurrently; for a 2026-07-28
        request every unanswered one goes into the same input_required answer (one round
        for all of them instead of one round each).

        Raises like the single asks; ProtocolError -32603 when asking is impossible (a
        2026-07-28 request other than tools/call, prompts/get, resources/read).
        """
        if self.task is not None:
            return await self.task.gather(self, asks)
        if self.request.envelope is None:
            for ask in asks:  # all checked before any is sent
                self._check_finer_capabilities(ask)
            results = await asyncio.gather(*(self._send(ask) for ask in asks))
            return [ask.parse(result) for ask, result in zip(asks, results, strict=True)]
        if self.round is None:
            if self.request.method not in INPUT_REQUIRED_METHODS:
                asked = asks[0].method if asks else "a request"
                raise cannot_ask(self.request.method, self.protocol_version, asked)
            self.round = Round({})  # a first round: nothing answered yet
        return self.round.resolve(asks, self.request.envelope.capabilities)

    def sample_request(
        self,
        messages: list[SamplingMessage | JSONObject] | str,
        *,
        key: str | None = None,
        **options: Unpack[SamplingOptions],
    ) -> Ask:
        """A sampling/createMessage ask for `gather_input` (arguments as for `sample`; its
        answer is a `CreateMessageResult`). Raises TypeError for an unknown option."""
        return self._sampling(messages, key, options)

    def _sampling(self, messages: Any, key: str | None, options: SamplingOptions) -> Ask:
        # Called by `sample` and `sample_request` themselves: a deprecation warning points
        # three frames up, at the handler's line.
        params = sampling_params(messages, options, stacklevel=3)
        return Ask("sampling/createMessage", params, _sampled, sampling_needs(params), key)

    def elicit_request(
        self, message: str, schema: type[T] | JSONObject, *, key: str | None = None
    ) -> Ask:
        """A form elicitation ask for `gather_input` (arguments as for `elicit`)."""
        params: JSONObject = {"message": message, "requestedSchema": requested_schema(schema)}
        if self.protocol_version is None or self.protocol_version >= "2025-11-25":
            params["mode"] = "form"
        return Ask(
            "elicitation/create",
            params,
            lambda result: parse_answer(schema, result),
            needs_form_elicitation,
            key,
        )

    def elicit_url_request(
        self, message: str, url: str, elicitation_id: str, *, key: str | None = None
    ) -> Ask:
        """A URL elicitation ask for `gather_input` (arguments as for `elicit_url`).

        Raises CapabilityNotDeclared in the handshake era without `elicitation.url`.
        """
        if self.request.envelope is None and needs_url_elicitation(self.client_capabilities):
            raise CapabilityNotDeclared("elicitation/create", ("elicitation", "url"), "client")
        params = {"mode": "url", "message": message, "url": url, "elicitationId": elicitation_id}
        return Ask("elicitation/create", params, _elicited_url, needs_url_elicitation, key)

    def roots_request(self, *, key: str | None = None) -> Ask:
        """A roots/list ask for `gather_input`; its answer is the list of `Root`s."""
        return Ask("roots/list", None, _roots, needs_roots, key)

    def _check_finer_capabilities(self, ask: Ask) -> None:
        """Handshake era: the connection refuses a method whose capability the client did
        not declare at all; the finer ones introduced at 2025-11-25 (elicitation modes,
        sampling.tools, sampling.context) are checked here, as at 2026-07-28 (the spec's MUST
        NOT: no form elicitation to a URL-only client, no tool-enabled sampling without
        sampling.tools)."""
        if (self.protocol_version or "") < "2025-11-25":
            return
        missing = ask.needs(self.client_capabilities)
        if missing is not None:
            path: list[str] = []
            while missing:  # {"sampling": {"tools": {}}} -> ("sampling", "tools")
                name, missing = next(iter(missing.items()))
                path.append(name)
            raise CapabilityNotDeclared(ask.method, tuple(path), "client")

    async def _send(self, ask: Ask) -> JSONObject:
        # Handshake era: a real request. The connection refuses (CapabilityNotDeclared) what
        # the client did not declare.
        params = ask.handshake_params()
        return await self.peer.request(ask.method, params, related_id=self.request.id)


# The answers as models (`answers` imports pydantic: only once something is asked).


def _sampled(result: JSONObject) -> CreateMessageResult:
    from mcpkit.server.answers import sampled

    return sampled(result)


def _elicited_url(result: JSONObject) -> ElicitResult:
    from mcpkit.server.answers import elicited_url

    return elicited_url(result)


def _roots(result: JSONObject) -> list[Root]:
    from mcpkit.server.answers import roots

    return roots(result)


def _read(result: JSONObject) -> ReadResourceResult:
    from mcpkit.server.answers import read_result

    return read_result(result)


def context_parameter(fn: Callable[..., Any], hints: JSONObject) -> str | None:
    """The name of the parameter annotated `Context` (or `Context | None`), if any; `hints`
    are the function's resolved annotations (`hints.resolve_hints`).

    An annotation that could not be evaluated (say `ctx: "Context"` imported only under
    TYPE_CHECKING) counts when its last dotted name is `Context`.
    """
    for name in inspect.signature(fn).parameters:
        annotation = hints.get(name)
        if isinstance(annotation, str):
            if names_context(annotation):
                return name
            continue
        union = typing.get_origin(annotation) in (typing.Union, types.UnionType)
        candidates = typing.get_args(annotation) if union else (annotation,)
        if any(isinstance(c, type) and issubclass(c, Context) for c in candidates):
            return name
    return None
