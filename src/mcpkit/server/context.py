"""`Context`: what a handler may know and do about the request it is serving.

One is made per request (cheap: three references). A tool gets it by declaring a parameter
annotated `Context`; built-in handlers always get it. The calls that ask the client for
something (`sample`, `elicit`, `list_roots`) are requests the server sends in the handshake
era; in the 2026-07-28 era the same calls become an input-required answer, so tool code does
not change between eras.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from mcpkit.errors import CapabilityNotDeclared
from mcpkit.protocol import RequestReceived
from mcpkit.runtime import Session
from mcpkit.server.elicitation import Elicited, parse_answer, requested_schema

if TYPE_CHECKING:
    from mcpkit.server.server import Server

JSONObject = dict[str, Any]
T = TypeVar("T")
LogLevel = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
LOG_LEVELS: tuple[LogLevel, ...] = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)
_SEVERITY = {level: rank for rank, level in enumerate(LOG_LEVELS)}


@dataclass(slots=True)
class SessionState:
    """What the server remembers about one connected client."""

    log_level: LogLevel | None = None  # None: the client has not asked for log messages
    subscriptions: set[str] = field(default_factory=set)

    def wants_log(self, level: LogLevel) -> bool:
        return self.log_level is not None and _SEVERITY[level] >= _SEVERITY[self.log_level]


class Context:
    """The request being served: who asked, what they declared, and ways to talk back."""

    __slots__ = ("request", "server", "session")

    def __init__(self, server: Server, session: Session, request: RequestReceived) -> None:
        self.server = server
        self.session = session
        self.request = request

    # -- facts -----------------------------------------------------------------------------

    @property
    def request_id(self) -> str | int:
        return self.request.id

    @property
    def params(self) -> JSONObject:
        return self.request.params or {}

    @property
    def protocol_version(self) -> str | None:
        """The negotiated revision of this connection."""
        return self.session.connection.protocol_version

    @property
    def client_info(self) -> JSONObject:
        return self.session.connection.peer_info or {}

    @property
    def client_capabilities(self) -> JSONObject:
        return self.session.connection.peer_capabilities or {}

    @property
    def state(self) -> SessionState:
        """This client's session state (log level, subscriptions)."""
        return self.session.state  # type: ignore[no-any-return]

    @property
    def lifespan(self) -> Any:
        """Whatever the server's lifespan context manager yielded (None without one)."""
        return self.server.lifespan_state

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

        Raises LocalProtocolViolation when `progress` does not increase.
        """
        return self.session.report_progress(self.request.id, progress, total, message)

    async def log(self, level: LogLevel, data: Any, logger: str | None = None) -> bool:
        """Send a log message to the client if it asked for this level; True when sent."""
        state: SessionState = self.session.state
        if not state.wants_log(level) or "logging" not in self.server.capabilities():
            return False
        params: JSONObject = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        self.session.notify("notifications/message", params, related_id=self.request.id)
        return True

    async def debug(self, data: Any) -> bool:
        return await self.log("debug", data)

    async def info(self, data: Any) -> bool:
        return await self.log("info", data)

    async def warning(self, data: Any) -> bool:
        return await self.log("warning", data)

    async def error(self, data: Any) -> bool:
        return await self.log("error", data)

    async def read_resource(self, uri: str) -> JSONObject:
        """Read one of this server's own resources (a ReadResourceResult dict).

        Raises ProtocolError (resource not found) like the resources/read request would.
        """
        return await self.server.resources.read(uri, self)

    def close_sse_stream(self) -> bool:
        """Streamable HTTP (2025-11-25, with an event store): end this request's SSE stream
        now; the client resumes it with GET + Last-Event-ID and nothing is lost. Useful to
        free a connection during a long wait. False when the transport cannot (stdio, no
        event store, not streaming)."""
        close = getattr(self.session.transport, "close_sse_stream", None)
        return bool(close(self.request.id)) if close is not None else False

    # -- asking the client -----------------------------------------------------------------

    async def sample(
        self,
        messages: list[JSONObject] | str,
        *,
        max_tokens: int = 1024,
        system_prompt: str | None = None,
        **options: Any,
    ) -> JSONObject:
        """Ask the client's LLM for a completion (sampling/createMessage); returns its result.

        `messages` may be a plain string (one user message). `options` are further
        CreateMessageRequest params in wire spelling (modelPreferences, temperature, tools, ...).
        Raises CapabilityNotDeclared when the client offers no sampling.
        """
        if isinstance(messages, str):
            messages = [{"role": "user", "content": {"type": "text", "text": messages}}]
        params: JSONObject = {"messages": messages, "maxTokens": max_tokens, **options}
        if system_prompt is not None:
            params["systemPrompt"] = system_prompt
        return await self._ask("sampling/createMessage", params)

    async def elicit(self, message: str, schema: type[T] | JSONObject) -> Elicited[T]:
        """Ask the user for structured input (form mode).

        `schema` is a pydantic model, dataclass or TypedDict (the answer comes back as an
        instance) or a JSON Schema dict (the answer comes back as a dict). Raises
        CapabilityNotDeclared without the client's elicitation capability, ValueError for a
        schema forms cannot carry or an answer that does not fit it.
        """
        params: JSONObject = {"message": message, "requestedSchema": requested_schema(schema)}
        if self.protocol_version is None or self.protocol_version >= "2025-11-25":
            params["mode"] = "form"
        return parse_answer(schema, await self._ask("elicitation/create", params))

    async def elicit_url(self, message: str, url: str, elicitation_id: str) -> JSONObject:
        """Send the user to a URL (URL mode elicitation, 2025-11-25 on)."""
        elicitation = self.client_capabilities.get("elicitation")
        if not isinstance(elicitation, dict) or "url" not in elicitation:
            raise CapabilityNotDeclared("elicitation/create", ("elicitation", "url"), "client")
        params = {"mode": "url", "message": message, "url": url, "elicitationId": elicitation_id}
        return await self._ask("elicitation/create", params)

    async def list_roots(self) -> list[JSONObject]:
        """The client's roots (roots/list)."""
        result = await self._ask("roots/list", None)
        roots: list[JSONObject] = result.get("roots", [])
        return roots

    async def _ask(self, method: str, params: JSONObject | None) -> JSONObject:
        # The connection refuses (CapabilityNotDeclared) what the client did not declare.
        return await self.session.request(method, params, related_id=self.request.id)
