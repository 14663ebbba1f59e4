"""The checks every request passes before it is routed, each an ASGI wrapper around the next.

`HeaderLimits` reads the headers once into a dict (431 past the limits, 400 for a duplicated
header that matters) and leaves it in the scope under `HEADERS` for the layers after it;
`HostCheck` refuses an Origin or Host the `Security` options do not allow (DNS rebinding);
`BearerGuard` wraps the endpoints that need a caller (the MCP endpoint and the legacy SSE
ones, not the metadata) and leaves the verified `Principal` in the scope under `PRINCIPAL`.

Every request goes through these, so they cost what they must and no more: a wrapper whose
check is synchronous is a plain function returning the next layer's awaitable (no coroutine
of its own per request), and a wrapper whose feature is off is not in the chain at all (no
auth: no `BearerGuard`; no Host/Origin protection asked for: no `HostCheck`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from types import FunctionType, MethodType
from typing import Any

from mcpkit.protocol.http import Refusal
from mcpkit.runtime.principal import Principal
from mcpkit.transports.http.guard import Authenticator
from mcpkit.transports.http.options import Limits
from mcpkit.transports.http.requests import Headers, header_dict, refuse
from mcpkit.transports.http.security import Checker, Security
from mcpkit.transports.http.streams import Receive, Send

Scope = dict[str, Any]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
HEADERS = "mcpkit.headers"  # the request's headers by lowercase name (`Headers`)
PRINCIPAL = "mcpkit.principal"  # the verified caller, on a guarded endpoint's scope


def direct(app: ASGIApp) -> ASGIApp:
    """`app` as the cheapest thing to call: an object's bound `__call__` rather than the
    object (calling an instance goes through its type's call slot first: measurably slower
    on every request, counted with bench/app_instructions.py)."""
    if isinstance(app, FunctionType | MethodType):
        return app
    call: ASGIApp = type(app).__call__.__get__(app)  # the bound method
    return call


def headers_of(scope: Scope) -> Headers:
    """The headers `HeaderLimits` read."""
    headers: Headers = scope[HEADERS]
    return headers


def principal_of(scope: Scope) -> Principal | None:
    """The caller `BearerGuard` verified; None without authorization."""
    return scope.get(PRINCIPAL)


class HeaderLimits:
    """At most `limits.max_headers` headers, `limits.max_header_bytes` of names and values."""

    __slots__ = ("app", "max_bytes", "max_count")

    def __init__(self, app: ASGIApp, limits: Limits) -> None:
        self.app = direct(app)
        self.max_count = limits.max_headers
        self.max_bytes = limits.max_header_bytes

    def __call__(self, scope: Scope, receive: Receive, send: Send) -> Awaitable[None]:
        headers = header_dict(scope["headers"], self.max_count, self.max_bytes)
        if type(headers) is Refusal:
            return refuse(send, headers)
        scope[HEADERS] = headers
        return self.app(scope, receive, send)


class HostCheck:
    """Origin and Host against `Security` (see security.py)."""

    __slots__ = ("app", "check")

    def __init__(self, app: ASGIApp, checker: Checker) -> None:
        self.app = direct(app)
        self.check = checker.check

    @staticmethod
    def around(app: ASGIApp, security: Security) -> ASGIApp:
        """`app` behind the check, or `app` itself when nothing would ever be refused."""
        checker = Checker(security)
        if checker.hosts is None and checker.origins == ("*",):
            return app
        return HostCheck(app, checker)

    def __call__(self, scope: Scope, receive: Receive, send: Send) -> Awaitable[None]:
        refused = self.check(scope, scope[HEADERS])
        if refused is not None:
            return refuse(send, refused)
        return self.app(scope, receive, send)


class BearerGuard:
    """Lets a request through with the verified caller in its scope, or answers with the
    authenticator's refusal (401 with its challenge, ...)."""

    __slots__ = ("app", "auth")

    def __init__(self, app: ASGIApp, auth: Authenticator) -> None:
        self.app = direct(app)
        self.auth = auth

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        verdict = await self.auth.authenticate(scope, scope[HEADERS])
        if isinstance(verdict, Refusal):
            await refuse(send, verdict)
            return
        scope[PRINCIPAL] = verdict
        await self.app(scope, receive, send)
