"""The checks every request passes before it is routed, each an ASGI wrapper around the next.

`HeaderLimits` reads the headers once into a dict (431 past the limits, 400 for a duplicated
header that matters) and leaves it in the scope under `HEADERS` for the layers after it;
`HostCheck` (security.py) refuses an Origin or Host the `Security` options do not allow (DNS
rebinding); `BearerGuard` wraps the handlers that need a caller (the MCP endpoint's and the
HTTP+SSE ones, not the metadata) and leaves the verified `Principal` in the scope under
`PRINCIPAL`.

Every request goes through these, so they cost what they must and no more: a wrapper whose
check is synchronous is a plain function returning the next layer's awaitable (no coroutine
of its own per request), and a wrapper whose feature is off is not in the chain at all (no
auth: no `BearerGuard`; no Host/Origin protection asked for: no `HostCheck`).
"""

from __future__ import annotations

from collections.abc import Awaitable

from mcpkit.protocol import http as rules
from mcpkit.protocol.http import Refusal
from mcpkit.transports.http.asgi import HEADERS, PRINCIPAL, ASGIApp, Scope, direct
from mcpkit.transports.http.guard import Authenticator
from mcpkit.transports.http.requests import duplicate_refusal, refuse
from mcpkit.transports.http.streams import Receive, Send


class HeaderLimits:
    """At most `max_count` headers, `max_bytes` of names and values (431; some ASGI servers,
    uvicorn with httptools, take megabytes of them); a duplicated header that matters is 400
    (requests.py). The headers are left in the scope as a dict."""

    __slots__ = ("app", "max_bytes", "max_count", "too_large")

    def __init__(self, app: ASGIApp, max_count: int, max_bytes: int) -> None:
        self.app = direct(app)
        self.max_count = max_count
        self.max_bytes = max_bytes
        message = (
            f"Request Header Fields Too Large: at most {max_count} headers of {max_bytes} "
            "bytes in all"
        )
        self.too_large = rules.refusal(431, message)

    def __call__(self, scope: Scope, receive: Receive, send: Send) -> Awaitable[None]:
        raw = scope["headers"]
        size = 0
        for name, value in raw:
            size += len(name) + len(value)
        if size > self.max_bytes or len(raw) > self.max_count:
            return refuse(send, self.too_large)
        headers = scope[HEADERS] = dict(raw)
        if len(headers) != len(raw):  # a name came twice: does it matter?
            refused = duplicate_refusal(raw)
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
