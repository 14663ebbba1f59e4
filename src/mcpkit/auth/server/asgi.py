"""The small HTTP layer the endpoints share: read a request, write a response, refuse.

A `HTTPRequest` is read whole (bodies are small here, and cut off at a limit); endpoints return a
`HTTPResponse`. OAuth failures are raised as `OAuthErrorResponse` with the RFC 6749 `error`
code, a short description that never carries a secret, and the status; `error_response`
renders it as the JSON body RFC 6749 section 5.2 specifies. Form and query parameters are
parsed strictly: a parameter given twice is refused (RFC 6749 section 3.1), an empty one
counts as absent.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

from mcpkit.errors import MCPError

Send = Callable[[dict[str, Any]], Awaitable[None]]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Headers = list[tuple[bytes, bytes]]

NO_STORE: Headers = [(b"cache-control", b"no-store"), (b"pragma", b"no-cache")]
MAX_FIELDS = 64


class OAuthErrorResponse(MCPError):
    """A refused request: `error` is the RFC's code, `description` safe to show anyone."""

    def __init__(
        self, error: str, description: str, status: int = 400, headers: Headers | None = None
    ) -> None:
        super().__init__(f"{error}: {description}")
        self.error = error
        self.description = description
        self.status = status
        self.headers = headers or []


class BodyTooLarge(OAuthErrorResponse):
    def __init__(self, limit: int) -> None:
        super().__init__("invalid_request", f"request body over {limit} bytes", 413)


@dataclass(frozen=True)
class HTTPRequest:
    method: str
    path: str
    query: bytes
    headers: Mapping[str, str]
    body: bytes
    client_host: str | None
    server_host: str | None

    def header(self, name: str) -> str | None:
        return self.headers.get(name)

    def form(self) -> Params:
        """The urlencoded body's parameters. Raises OAuthErrorResponse (invalid_request) when
        the body is not application/x-www-form-urlencoded or not well-formed."""
        kind = (self.header("content-type") or "").split(";", 1)[0].strip().lower()
        if kind != "application/x-www-form-urlencoded":
            raise OAuthErrorResponse(
                "invalid_request", "expected application/x-www-form-urlencoded"
            )
        return Params.parse(self.body)

    def query_params(self) -> Params:
        return Params.parse(self.query)


@dataclass(frozen=True)
class Params:
    """Parameters by name, each with every value given (RFC 8707 `resource` may repeat)."""

    values: Mapping[str, tuple[str, ...]]

    @classmethod
    def parse(cls, raw: bytes) -> Params:
        """Raises OAuthErrorResponse (invalid_request) for bad encoding or too many fields."""
        try:
            pairs = parse_qsl(
                raw.decode("utf-8"), keep_blank_values=False, max_num_fields=MAX_FIELDS
            )
        except (UnicodeDecodeError, ValueError):
            raise OAuthErrorResponse("invalid_request", "malformed parameters") from None
        values: dict[str, tuple[str, ...]] = {}
        for name, value in pairs:
            values[name] = (*values.get(name, ()), value)
        return cls(values)

    def get(self, name: str) -> str | None:
        """The parameter's one value, or None. Raises OAuthErrorResponse when it is repeated."""
        found = self.values.get(name)
        if not found:
            return None
        if len(found) > 1:
            raise OAuthErrorResponse("invalid_request", f"parameter {name} given more than once")
        return found[0]

    def require(self, name: str) -> str:
        value = self.get(name)
        if value is None:
            raise OAuthErrorResponse("invalid_request", f"missing parameter {name}")
        return value

    def all(self, name: str) -> tuple[str, ...]:
        return self.values.get(name, ())


@dataclass
class HTTPResponse:
    status: int
    body: bytes = b""
    headers: Headers = field(default_factory=list)

    async def send(self, send: Send) -> None:
        headers = [*self.headers, (b"content-length", str(len(self.body)).encode())]
        await send({"type": "http.response.start", "status": self.status, "headers": headers})
        await send({"type": "http.response.body", "body": self.body})


def json_response(status: int, document: Any, headers: Headers | None = None) -> HTTPResponse:
    body = json.dumps(document, separators=(",", ":")).encode()
    return HTTPResponse(status, body, [(b"content-type", b"application/json"), *(headers or [])])


def error_response(error: OAuthErrorResponse) -> HTTPResponse:
    """The RFC 6749 section 5.2 JSON error; never cached."""
    document = {"error": error.error, "error_description": error.description}
    return json_response(error.status, document, [*NO_STORE, *error.headers])


def redirect(location: str, status: int = 302) -> HTTPResponse:
    return HTTPResponse(status, b"", [(b"location", location.encode()), *NO_STORE])


async def read_request(scope: dict[str, Any], receive: Receive, limit: int) -> HTTPRequest:
    """The request of `scope`, its body read whole. Raises BodyTooLarge past `limit` bytes
    (announced by Content-Length, or counted as it arrives)."""
    headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
    declared = headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise BodyTooLarge(limit)
    body = bytearray()
    if scope["method"] not in ("GET", "HEAD", "OPTIONS"):
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                break
            body.extend(message.get("body", b""))
            if len(body) > limit:
                raise BodyTooLarge(limit)
            if not message.get("more_body"):
                break
    client, server = scope.get("client"), scope.get("server")
    return HTTPRequest(
        method=scope["method"],
        path=scope["path"],
        query=scope.get("query_string", b""),
        headers=headers,
        body=bytes(body),
        client_host=client[0] if client else None,
        server_host=server[0] if server else None,
    )
