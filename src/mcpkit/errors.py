"""One exception tree for mcpkit, and the JSON-RPC / MCP error codes.

Which exception means what:

- `ProtocolError`: an error *response* — the peer answered a request with a JSON-RPC error, or a
  handler raises it to answer with a specific code. Carries `code`, `message` and `data`.
- `ConnectionClosed`: the connection ended (peer exited, EOF, closed by you); every request still
  waiting fails with it at once.
- `RequestTimeout`: no answer within the request's timeout; the request was cancelled.
- `CapabilityNotDeclared`: you tried to use a feature the peer did not declare. Raised locally,
  nothing is sent.
- `UnsupportedProtocolVersion`: the peer chose a protocol revision we cannot speak.
- `LocalProtocolViolation`: your code asked the connection to break the protocol's rules
  (answer a request twice, send a request before initialization, ...). A bug in the caller.
- `URLElicitationRequired`: a `ProtocolError` (-32042) whose `elicitations` the user must
  complete (open the URLs) before the request can succeed.
- `ToolError`: a tool ran and reported failure (`isError`); carries the `CallToolResult`.
  Raised only when asked (`call_tool(..., raise_on_error=True)`).
- `ToolOutputInvalid`: a tool's `structuredContent` does not match the `outputSchema` it
  declared. The server broke its own contract; carries the result and what is wrong.
- `InvalidResult`: the peer answered a request with a result of the wrong shape.
- `PaginationError`: a list request kept returning cursors (past the page limit, or a cursor
  it had already given).
- `MissingExtra`: an optional dependency is not installed; the message names the extra to
  install. Also an `ImportError`.

The other layers define their errors beside the code that raises them (`OAuthError` in
`mcpkit.auth.client`, `ServerUnavailable` in `mcpkit.host`, `StoreUnavailable` in
`mcpkit.stores`, ...), every one under `MCPError`, keeping a builtin base (ValueError,
LookupError) where callers caught that before; a dependency's exceptions (httpx, redis, PyJWT,
the LLM SDKs) are mapped to ours where mcpkit calls it. tests/test_exception_tree.py holds
every module to this.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from mcpkit.types import CallToolResult

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603
# MCP-specific codes.
# Implementation-defined server errors (-32000 to -32099): ours for refusals with no better
# code (busy, a transport-level refusal).
SERVER_ERROR: Final = -32000
RESOURCE_NOT_FOUND: Final = -32002  # handshake era; 2026-07-28 uses INVALID_PARAMS
HEADER_MISMATCH: Final = -32020
MISSING_REQUIRED_CLIENT_CAPABILITY: Final = -32021
UNSUPPORTED_PROTOCOL_VERSION: Final = -32022
URL_ELICITATION_REQUIRED: Final = -32042


def resource_not_found_code(protocol_version: str | None) -> int:
    """The code a revision names for an unknown resource URI."""
    if protocol_version is not None and protocol_version >= "2026-07-28":
        return INVALID_PARAMS
    return RESOURCE_NOT_FOUND


class MCPError(Exception):
    """Base class of every error mcpkit raises."""


class ProtocolError(MCPError):
    """A JSON-RPC error response: received from the peer, or raised by a handler to send one."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def __str__(self) -> str:
        return f"{self.message} (code {self.code})"

    def to_error_object(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error

    @classmethod
    def from_error_object(cls, error: dict[str, Any]) -> ProtocolError:
        return cls(error["code"], error["message"], error.get("data"))


class InvalidParams(ProtocolError):
    """Convenience for handlers: answer with -32602 Invalid params."""

    def __init__(self, message: str, data: Any = None) -> None:
        super().__init__(INVALID_PARAMS, message, data)


class MethodNotFound(ProtocolError):
    """Convenience for handlers: answer with -32601 Method not found."""

    def __init__(self, method: str) -> None:
        super().__init__(METHOD_NOT_FOUND, f"Method not found: {method}", {"method": method})


class ConnectionClosed(MCPError):
    """The connection ended before an answer arrived."""


class RequestTimeout(MCPError):
    """The peer did not answer in time; the request has been cancelled."""

    def __init__(self, method: str, timeout: float, hint: str | None = None) -> None:
        message = f"{method} got no answer within {timeout:g} s; the request was cancelled"
        super().__init__(f"{message}. {hint}" if hint else message)
        self.method = method
        self.timeout = timeout


class _RequestCancelled(MCPError):
    """Deprecated, never raised: a request the peer cancels has its handler's task cancelled
    (asyncio.CancelledError); `mcpkit.protocol.RequestCancelled` is the event that says so.
    Kept one release for code that names it; goes with the next."""


class TaskCancelled(MCPError):
    """The task whose result was awaited was cancelled (by `tasks/cancel`, or by the server)."""

    def __init__(self, task_id: str, message: str | None = None) -> None:
        super().__init__(f"task {task_id} was cancelled" + (f": {message}" if message else ""))
        self.task_id = task_id


class CapabilityNotDeclared(MCPError):
    """The peer did not declare the capability this call needs; nothing was sent."""

    def __init__(self, method: str, capability: tuple[str, ...], peer: str) -> None:
        path = ".".join(capability)
        super().__init__(f"cannot use {method}: the {peer} did not declare the '{path}' capability")
        self.method = method
        self.capability = capability


class UnsupportedProtocolVersion(MCPError):
    """The peer chose a protocol revision we do not speak."""

    def __init__(self, offered: str, supported: tuple[str, ...]) -> None:
        super().__init__(
            f"the server answered with protocol version {offered!r}, which this client does not "
            f"speak (supported: {', '.join(supported)})"
        )
        self.offered = offered
        self.supported = supported


class LocalProtocolViolation(MCPError):
    """The caller asked the connection to do something the protocol forbids."""


class URLElicitationRequired(ProtocolError):
    """-32042: the request needs the user to complete URL-mode elicitations first.

    `elicitations` are the URL elicitation requests (dicts with mode, url, message,
    elicitationId) from the error's data; open them, then retry the request.
    """

    def __init__(self, message: str, data: Any = None) -> None:
        super().__init__(URL_ELICITATION_REQUIRED, message, data)
        found = data.get("elicitations") if isinstance(data, dict) else None
        self.elicitations: list[dict[str, Any]] = [
            item for item in found or [] if isinstance(item, dict)
        ]

    def __str__(self) -> str:
        urls = ", ".join(str(item.get("url")) for item in self.elicitations)
        where = f"; open {urls} and retry" if urls else ""
        return f"{self.message} (code {self.code}{where})"


class ToolError(MCPError):
    """A tool ran and reported failure: its result had `isError` set.

    `result` is the whole `CallToolResult`; the message quotes its text content.
    """

    def __init__(self, tool: str, result: CallToolResult) -> None:
        texts = [getattr(block, "text", None) for block in result.content]
        detail = " ".join(text for text in texts if isinstance(text, str)).strip()
        if len(detail) > 500:
            detail = detail[:497] + "..."
        super().__init__(f"tool {tool!r} reported an error: {detail or '(no text content)'}")
        self.tool = tool
        self.result = result


class ToolOutputInvalid(MCPError):
    """A tool's structuredContent does not match its declared outputSchema (a server bug).

    `result` is the `CallToolResult` as received; `problems` lists what is wrong.
    """

    def __init__(self, tool: str, result: CallToolResult, problems: list[str]) -> None:
        listed = "; ".join(problems)
        super().__init__(
            f"tool {tool!r} returned structured content that does not match its outputSchema: "
            f"{listed}"
        )
        self.tool = tool
        self.result = result
        self.problems = problems


class PaginationError(MCPError):
    """A list request did not come to an end: too many pages, or a cursor seen before."""

    def __init__(self, method: str, pages: int, reason: str) -> None:
        super().__init__(f"{method}: gave up after {pages} pages: {reason}")
        self.method = method
        self.pages = pages


class InvalidResult(MCPError):
    """The peer answered with a result that does not have the shape its method requires."""

    def __init__(self, method: str, problem: str) -> None:
        super().__init__(f"the answer to {method} is malformed: {problem}")
        self.method = method
        self.problem = problem


class MissingExtra(MCPError, ImportError):
    """An optional dependency is not installed; the message names the `pip install` that
    brings it (`pip install 'mcpkit[http]'`). An ImportError too, so code that already
    catches ImportError for an optional feature keeps working."""

    def __init__(self, module: str, extra: str) -> None:
        super().__init__(
            f"{module} is not installed; it comes with mcpkit's {extra!r} extra: "
            f"pip install 'mcpkit[{extra}]'",
            name=module,
        )
        self.module = module
        self.extra = extra


# Hidden from type checkers: a typo in `from mcpkit.errors import ...` stays an error there.
if not TYPE_CHECKING:

    def __getattr__(name: str) -> type[MCPError]:
        # `RequestCancelled` was an exception nothing raised, named like the protocol's event.
        if name == "RequestCancelled":
            from mcpkit.types.deprecation import warn_deprecated

            warn_deprecated(
                "mcpkit.errors.RequestCancelled is deprecated and never raised: a cancelled "
                "request's handler sees asyncio.CancelledError; mcpkit.protocol.RequestCancelled"
                " is the event"
            )
            return _RequestCancelled
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
