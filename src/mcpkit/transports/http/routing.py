"""Routing: one table from (path, method) to handler, and the MCP endpoint's handlers.

`Router` strips the ASGI `root_path` (when mounted) and looks (path, method) up in its table,
then the path alone in its fallbacks (a path served with other methods answers 405), else
404. The app fills it (app.py): the MCP endpoint (with and without a trailing slash), the
Protected Resource Metadata paths when there is an `auth`, the HTTP+SSE paths when
they are on. `MCPEndpoint` gives the endpoint's handlers: POST reads the body (within its limits),
checks the scopes its requests need, and hands the parsed messages to the 2026-07-28
endpoint (per_request.py) or the handshake-era one (handshake.py); GET and DELETE go to the
handshake era when the request names a session (405 otherwise, and on a stateless endpoint);
other methods get 405.

When the state shared between workers fails (Redis unreachable, paused past its timeout,
restarting: `StoreUnavailable`), a handshake-era request gets 503 with `Retry-After` and a
JSON-RPC error saying so, within the state's timeout, and the worker goes on serving. The
state is only asked before a response starts, so the 503 can always be sent; a stream
already open goes on (its events may not be stored, see stores/redis_events.py).

Like the wrappers (wrappers.py), the table lookup is a plain function returning the
handler's awaitable: no coroutine of its own per request, and one lookup for path and method.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

from mcpkit.errors import INTERNAL_ERROR
from mcpkit.protocol import http as rules
from mcpkit.protocol.http import Refusal
from mcpkit.runtime.principal import Principal
from mcpkit.stores.tasks import StoreUnavailable
from mcpkit.transports.http.asgi import HEADERS, PRINCIPAL, ASGIApp, Scope, direct, principal_of
from mcpkit.transports.http.guard import Authenticator, RequiredScopes, missing_scopes
from mcpkit.transports.http.handshake import SessionEndpoint
from mcpkit.transports.http.options import Limits
from mcpkit.transports.http.per_request import PerRequestEndpoint
from mcpkit.transports.http.requests import BodyClock, read_post, refuse, text
from mcpkit.transports.http.streams import Receive, Send, send_json

RETRY_AFTER = 1  # seconds a client is asked to wait after a 503 for a failed shared state


class Router:
    """(path, method) -> handler; a path's other methods -> its fallback (405, or a handler
    that answers every method); any other path 404."""

    __slots__ = ("fallbacks", "not_found", "routes")

    def __init__(self) -> None:
        self.routes: dict[tuple[str, str], ASGIApp] = {}
        self.fallbacks: dict[str, ASGIApp] = {}
        self.not_found = refusing(rules.refusal(404, "Not Found"))

    def add(self, path: str, methods: dict[str, ASGIApp], fallback: ASGIApp | None) -> None:
        """Serve `path`: each method by its handler, any other by `fallback` (else 404)."""
        for method, handler in methods.items():
            self.routes[path, method] = direct(handler)
        self.fallbacks[path] = direct(fallback or self.not_found)

    def __call__(self, scope: Scope, receive: Receive, send: Send) -> Awaitable[None]:
        path = scope["path"]
        root = scope.get("root_path")
        if root and path.startswith(root):
            path = path[len(root) :] or "/"
        handler = self.routes.get((path, scope["method"]))
        if handler is None:
            handler = self.fallbacks.get(path, self.not_found)
        return handler(scope, receive, send)


def refusing(refused: Refusal) -> ASGIApp:
    """An endpoint that answers every request with `refused`."""

    def answer(scope: Scope, receive: Receive, send: Send) -> Awaitable[None]:
        return refuse(send, refused)

    return answer


class Metadata:
    """Protected Resource Metadata (RFC 9728), readable by browser clients too (CORS)."""

    CORS = ((b"access-control-allow-origin", b"*"), (b"access-control-allow-headers", b"*"))

    def __init__(self, auth: Authenticator) -> None:
        self.auth = auth

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] not in ("GET", "HEAD", "OPTIONS"):
            await refuse(send, rules.method_not_allowed("GET, OPTIONS"))
            return
        await send_json(send, 200, self.auth.metadata(scope), list(self.CORS))


class ScopeCheck:
    """Before a POST's requests are served: the scopes they need (`required`), against the
    caller's; the authenticator's 403 `insufficient_scope` when some are missing."""

    __slots__ = ("auth", "required")

    def __init__(self, auth: Authenticator, required: RequiredScopes) -> None:
        self.auth = auth
        self.required = required

    def refusal(self, scope: Scope, parsed: Any, principal: Principal) -> Refusal | None:
        missing = missing_scopes(parsed, principal, self.required)
        return None if missing is None else self.auth.insufficient_scope(scope, missing)


class MCPEndpoint:
    """The MCP endpoint's handlers, by method (see the module docstring)."""

    def __init__(
        self,
        handshake: SessionEndpoint,
        per_request: PerRequestEndpoint,
        limits: Limits,
        *,
        stateless: bool,
        scopes: ScopeCheck | None,
    ) -> None:
        self.handshake = handshake
        self.per_request = per_request
        self._max_body = limits.max_body
        self._body_clock = BodyClock(limits.body_timeout)
        self._scopes = scopes
        self._stateless = stateless
        allow = rules.STATELESS_METHODS if stateless else rules.ENDPOINT_METHODS
        self.not_allowed = refusing(rules.method_not_allowed(allow))
        self._no_session = refusing(rules.method_not_allowed(rules.PER_REQUEST_ALLOW))

    def methods(self) -> dict[str, ASGIApp]:
        """The route table's entries for this endpoint (others get `not_allowed`)."""
        if self._stateless:
            return {"POST": self.post, "GET": self._stateless_get, "DELETE": self._stateless_get}
        return {"POST": self.post, "GET": self.get, "DELETE": self.delete}

    async def post(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = scope[HEADERS]  # (not headers_of nor principal_of: every POST's path)
        received = await read_post(receive, headers, self._max_body, self._body_clock)
        if type(received) is Refusal:
            await refuse(send, received)
            return
        _, body = received  # type: ignore[misc]
        principal = scope.get(PRINCIPAL)
        if principal is not None and self._scopes is not None and body.request_ids:
            refused = self._scopes.refusal(scope, body.parsed, principal)
            if refused is not None:
                await refuse(send, refused)
                return
        version_header = text(headers, b"mcp-protocol-version")
        if rules.is_per_request_post(text(headers, b"mcp-session-id"), version_header, body):
            await self.per_request.post(receive, send, headers, body, principal)
            return
        try:
            await self.handshake.post(receive, send, headers, body, principal)
        except StoreUnavailable as failure:
            await refuse(send, unavailable(failure))

    def get(self, scope: Scope, receive: Receive, send: Send) -> Awaitable[None]:
        headers = scope[HEADERS]
        if b"mcp-session-id" not in headers:  # 2026-07-28: no stream to open
            return self._no_session(scope, receive, send)
        opened = self.handshake.get(receive, send, headers, principal_of(scope))
        return _or_unavailable(send, opened)

    def delete(self, scope: Scope, receive: Receive, send: Send) -> Awaitable[None]:
        headers = scope[HEADERS]
        if b"mcp-session-id" not in headers:  # 2026-07-28: no session to end
            return self._no_session(scope, receive, send)
        ended = self.handshake.delete(send, headers, principal_of(scope))
        return _or_unavailable(send, ended)

    def _stateless_get(self, scope: Scope, receive: Receive, send: Send) -> Awaitable[None]:
        if b"mcp-session-id" not in scope[HEADERS]:
            return self._no_session(scope, receive, send)
        return self.not_allowed(scope, receive, send)


def unavailable(failure: StoreUnavailable) -> Refusal:
    """The 503 for a request that met a failed shared state: the failure's message (which
    store, the kind of failure; never its address), and when to try again."""
    message = f"Service Unavailable: {failure}; retry in a moment"
    retry = ((b"retry-after", str(RETRY_AFTER).encode()),)
    return rules.refusal(503, message, INTERNAL_ERROR, retry)


async def _or_unavailable(send: Send, handled: Awaitable[None]) -> None:
    try:
        await handled
    except StoreUnavailable as failure:
        await refuse(send, unavailable(failure))
