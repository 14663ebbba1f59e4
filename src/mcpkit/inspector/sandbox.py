"""The sandbox origin of the inspector's MCP Apps views: a second tiny ASGI app on its own
127.0.0.1 port (another origin than the page's, as the Apps text requires of a web host).

It serves, for a view id that views.py made (random, one per rendered view; the inspector's
token never reaches this origin):
- `GET /proxy/ID?host=ORIGIN`: the sandbox proxy page. The page frames it with `allow-scripts
  allow-same-origin`; it holds the view in an inner iframe sandboxed with `allow-scripts
  allow-forms` only (an opaque origin: the view cannot touch the proxy, another view, the
  inspector's page, nor navigate the top window or open popups) and relays JSON-RPC between
  the view and the page (proxy.js). Framed only by the inspector's page (`frame-ancestors`).
- `GET /view/ID`: the view's HTML, once, under the CSP built from its declared domains
  (`mcpkit.host.apps.content_security_policy`: the spec's restrictive default when none,
  `object-src 'none'`), with a `report-uri` back here; view_guard.js first in it (no CSP
  directive covers WebRTC, whose UDP goes anywhere: the guard takes it away).
- `POST /csp-report/ID`: the browser's CSP violation reports, shown in the page's log.
- `GET /proxy.js`: the proxy's script.
Anything else, or a `Host` header not naming this port, is refused.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from importlib import resources
from typing import Any
from urllib.parse import parse_qsl

import orjson

from mcpkit.inspector.views import Views

Scope = dict[str, Any]
Receive = Any
Send = Any
MAX_REPORT = 64 * 1024
_ID = re.compile(r"[A-Za-z0-9_-]{16,64}")
_SHADOW_ROOT_MODE = re.compile(r"shadowrootmod(e)", re.I | re.A)  # as view_guard.js
# what may precede the guard without ending the document's standards mode: a BOM, blanks,
# comments, then the doctype (a script before the doctype would make it a quirks page)
_PROLOGUE = re.compile(r"\A\ufeff?(?:\s|<!--.*?-->)*(?:<!doctype[^>]*>)?", re.I | re.S)
COMMON_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"cache-control", b"no-store"),
]
PROXY_PAGE = """<!doctype html>
<html><head><meta charset="utf-8">
<script src="/proxy.js" data-host="{host}"></script>
<style>html, body {{ margin: 0; padding: 0; height: 100%; overflow: hidden; }}
iframe {{ display: block; border: 0; width: 100%; height: 100%; }}</style>
</head><body><iframe id="view" title="MCP App view" sandbox="allow-scripts allow-forms"
allow="{allow}" src="/view/{id}"></iframe></body></html>
"""


class SandboxApp:
    """The sandbox origin's ASGI app; `configure(port, inspector_port)` once both listen."""

    def __init__(self, views: Views) -> None:
        self.views = views
        self.port = 0
        self._hosts: tuple[str, ...] = ()  # the inspector page's origins

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def configure(self, port: int, inspector_port: int) -> None:
        self.port = port
        self._hosts = (f"http://127.0.0.1:{inspector_port}", f"http://localhost:{inspector_port}")
        self.views.sandbox_origin = self.origin

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        if _header(scope, b"host") not in (f"127.0.0.1:{self.port}", f"localhost:{self.port}"):
            await _send(send, 403, b"forbidden", b"text/plain")  # DNS rebinding
            return
        method, path = scope["method"], scope["path"]
        kind, _, view_id = path.lstrip("/").partition("/")
        if method == "GET" and path == "/proxy.js":
            await self._script(send)
        elif not _ID.fullmatch(view_id):
            await _send(send, 404, b"not found", b"text/plain")
        elif method == "GET" and kind == "proxy":
            await self._proxy(scope, send, view_id)
        elif method == "GET" and kind == "view":
            await self._view(send, view_id)
        elif method == "POST" and kind == "csp-report":
            self.views.csp_report(view_id, await _report(receive))
            await _send(send, 204, b"", b"text/plain")
        else:
            await _send(send, 404, b"not found", b"text/plain")

    async def _script(self, send: Send) -> None:
        script = resources.files("mcpkit.inspector").joinpath("static", "proxy.js").read_bytes()
        await _send(send, 200, script, b"text/javascript; charset=utf-8")

    async def _proxy(self, scope: Scope, send: Send, view_id: str) -> None:
        host = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1"))).get("host")
        allow = self.views.allow(view_id)
        if allow is None or host not in self._hosts:
            await _send(send, 404, b"not found", b"text/plain")
            return
        page = PROXY_PAGE.format(host=host, allow=allow, id=view_id).encode()
        policy = (
            "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; "
            # the view's frame may only ever hold this origin's pages: it cannot navigate
            # itself away to carry what it was given to another site
            f"frame-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors {host}"
        )
        await _send(send, 200, page, b"text/html; charset=utf-8", policy)

    async def _view(self, send: Send, view_id: str) -> None:
        served = self.views.html(view_id)
        if served is None:
            await _send(send, 404, b"not found", b"text/plain")  # unknown, or loaded already
            return
        html, policy = served
        html = guarded(html)
        ancestors = " ".join((self.origin, *self._hosts))
        policy += f"; frame-ancestors {ancestors}; report-uri /csp-report/{view_id}"
        await _send(send, 200, html.encode(), b"text/html; charset=utf-8", policy)


def guarded(html: str) -> str:
    """The view's HTML with view_guard.js inline before anything of the view's own (the
    view's CSP allows inline scripts: the spec's policy always does), and `shadowrootmode`
    renamed as the guard renames it (a frame in a declarative shadow root escapes its watch)."""
    guard = resources.files("mcpkit.inspector").joinpath("static", "view_guard.js").read_text()
    html = _SHADOW_ROOT_MODE.sub(lambda m: m[0][:-1] + ("X" if m[1] == "E" else "x"), html)
    end = _PROLOGUE.match(html)
    cut = end.end() if end is not None else 0
    return f"{html[:cut]}<script>{guard}</script>{html[cut:]}"


async def _report(receive: Receive) -> Any:
    body = bytearray()
    while True:
        message = await receive()
        body.extend(message.get("body", b""))
        if message["type"] == "http.disconnect" or len(body) > MAX_REPORT:
            return None
        if not message.get("more_body"):
            break
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        return None


def _header(scope: Scope, name: bytes) -> str | None:
    found = [value for key, value in scope.get("headers", ()) if key.lower() == name]
    return found[0].decode("latin-1") if len(found) == 1 else None


async def _send(
    send: Send, status: int, body: bytes, content_type: bytes, policy: str | None = None
) -> None:
    headers = [(b"content-type", content_type), *COMMON_HEADERS]
    if policy is not None:
        headers.append((b"content-security-policy", policy.encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def quiet_server(uvicorn: Any, config: Any) -> Any:
    """A uvicorn server that leaves the signals to the inspector's own server (two servers
    capturing Ctrl-C would each restore the other's handler)."""

    class Quiet(uvicorn.Server):  # type: ignore[misc]
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield

    return Quiet(config)
