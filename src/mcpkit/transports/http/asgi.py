"""What the HTTP app's layers share: the ASGI types, and the scope keys one layer leaves for
the next (`HEADERS` from `HeaderLimits`, `PRINCIPAL` from `BearerGuard`; see app.py)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from types import FunctionType, MethodType
from typing import Any

from mcpkit.runtime.principal import Principal
from mcpkit.transports.http.streams import Receive, Send

Scope = dict[str, Any]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
HEADERS = "mcpkit.headers"  # the request's headers by lowercase name (requests.Headers)
PRINCIPAL = "mcpkit.principal"  # the verified caller, on a guarded endpoint's scope


def direct(app: ASGIApp) -> ASGIApp:
    """`app` as the cheapest thing to call: an object's bound `__call__` rather than the
    object (calling an instance goes through its type's call slot first: measurably slower
    on every request, counted with bench/app_instructions.py)."""
    if isinstance(app, FunctionType | MethodType):
        return app
    call: ASGIApp = type(app).__call__.__get__(app)  # the bound method
    return call


def principal_of(scope: Scope) -> Principal | None:
    """The caller `BearerGuard` verified; None without authorization."""
    return scope.get(PRINCIPAL)
