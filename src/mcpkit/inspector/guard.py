"""Who may talk to the inspector: a page served by this very inspector, holding its token.

Three checks on every request, before any route runs (each stops an attack the official
Inspector suffered):
- the token (`?token=` or `Authorization: Bearer`), compared in constant time: another page
  or program on this machine cannot drive the inspector (CVE-2025-49596: an unauthenticated
  local proxy let any web page start commands);
- `Host` is 127.0.0.1:PORT or localhost:PORT: a DNS-rebinding page, whose requests carry its
  own host name, is refused even on the right address and port;
- `Origin`, when sent, is this inspector's own: a foreign page's fetch is refused even if it
  somehow learned the token.
The token is never set as a cookie (cookies are shared between ports of one host).
"""

from __future__ import annotations

import hmac
import secrets
from typing import Any
from urllib.parse import parse_qsl

Scope = dict[str, Any]


def new_token() -> str:
    return secrets.token_urlsafe(32)


class Guard:
    """`allows(scope)`: whether a request passes the three checks (port set once bound)."""

    def __init__(self, token: str, port: int = 0) -> None:
        self.token = token
        self.port = port

    def allows(self, scope: Scope) -> bool:
        headers = _headers(scope)
        return (
            self._host_ok(headers.get("host"))
            and self._origin_ok(headers.get("origin"))
            and self._token_ok(scope, headers.get("authorization"))
        )

    def _host_ok(self, host: str | None) -> bool:
        return host in (f"127.0.0.1:{self.port}", f"localhost:{self.port}")

    def _origin_ok(self, origin: str | None) -> bool:
        if origin is None:
            return True  # not a browser's cross-origin request (curl, the CLI)
        return origin in (f"http://127.0.0.1:{self.port}", f"http://localhost:{self.port}")

    def _token_ok(self, scope: Scope, authorization: str | None) -> bool:
        given = query_token(scope)
        if given is None and authorization is not None:
            scheme, _, value = authorization.partition(" ")
            given = value.strip() if scheme.lower() == "bearer" else None
        if given is None:
            return False
        return hmac.compare_digest(given.encode(), self.token.encode())


def query_token(scope: Scope) -> str | None:
    query: str = scope.get("query_string", b"").decode("latin-1")
    for name, value in parse_qsl(query):
        if name == "token":
            return str(value)
    return None


def _headers(scope: Scope) -> dict[str, str]:
    seen: dict[str, str] = {}
    for name, value in scope.get("headers", ()):
        key = name.decode("latin-1").lower()
        if key in ("host", "origin", "authorization"):
            if key in seen:
                seen[key] = "\0"  # a repeated one: refused rather than guessed
            else:
                seen[key] = value.decode("latin-1")
    return seen
