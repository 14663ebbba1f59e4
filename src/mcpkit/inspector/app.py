"""The inspector's HTTP side: a plain ASGI app serving the page, its assets and the API
(docs/inspector.md has the routes).

Every request passes the guard (guard.py) first; nothing answers before it, static files and
the event stream included. Only POST routes act (connect, request, answer, disconnect); a GET
reads. Every answer carries a content security policy that runs only the inspector's own
script, and asks for no referrer, so the token in the page's URL never leaves it.
"""

from __future__ import annotations

import asyncio
import contextlib
from importlib import resources
from typing import Any, TypeGuard

import orjson

from mcpkit.inspector.connection import InspectedServer
from mcpkit.inspector.guard import Guard
from mcpkit.inspector.history import History
from mcpkit.inspector.views import ViewError, Views

Scope = dict[str, Any]
Receive = Any
Send = Any
JSONObject = dict[str, Any]
MAX_BODY = 16 * 1024 * 1024  # a request's params (a large tool argument), bounded
KEEPALIVE = 15.0  # seconds between comments on an idle event stream
QUIET: JSONObject = {}  # what _next returns after KEEPALIVE seconds of quiet
STATIC_TYPES = {
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".html": "text/html; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
}
SECURITY_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"cache-control", b"no-store"),
    (b"x-frame-options", b"DENY"),
    # only the inspector's own script runs, whatever a server's text slips into the page
    (
        b"content-security-policy",
        b"default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
        b"img-src 'self' data: blob:; media-src 'self' data: blob:; connect-src 'self'; "
        b"frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
    ),
]


class InspectorApp:
    """The ASGI app: guard, then the route."""

    def __init__(
        self,
        guard: Guard,
        connection: InspectedServer,
        history: History,
        views: Views | None = None,
    ) -> None:
        self.guard = guard
        self.connection = connection
        self.history = history
        self.views = views or Views(connection, history)
        self._routes = {
            ("GET", "/"): self._index,
            ("GET", "/api/state"): self._state,
            ("POST", "/api/connect"): self._connect,
            ("POST", "/api/disconnect"): self._disconnect,
            ("POST", "/api/request"): self._request,
            ("POST", "/api/answer"): self._answer,
            ("GET", "/api/events"): self._events,
            ("GET", "/api/history"): self._history,
            ("GET", "/api/history.jsonl"): self._history_jsonl,
            ("POST", "/api/view"): self._view,
            ("POST", "/api/view/message"): self._view_message,
        }

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            return
        if scope["type"] != "http" or not self.guard.allows(scope):
            await _plain(send, 403, b"forbidden")  # no hint of which check failed
            return
        method, path = scope["method"], scope["path"]
        route = self._routes.get((method, path))
        if route is not None:
            await route(scope, receive, send)
        elif method == "GET" and path.startswith("/static/"):
            await self._static(scope, send, path.removeprefix("/static/"))
        elif any(known == path for _, known in self._routes):
            await _plain(send, 405, b"method not allowed")
        else:
            await _plain(send, 404, b"not found")

    # -- the page --------------------------------------------------------------------------

    async def _index(self, scope: Scope, receive: Receive, send: Send) -> None:
        page = _asset("index.html")
        if page is None:
            await _plain(send, 404, b"the inspector's page is not installed")
            return
        body = page.replace(b"{{TOKEN}}", self.guard.token.encode())
        await _send(send, 200, body, b"text/html; charset=utf-8", frames=self.views.sandbox_origin)

    async def _static(self, scope: Scope, send: Send, name: str) -> None:
        suffix = name[name.rfind(".") :] if "." in name else ""
        content_type = STATIC_TYPES.get(suffix)
        body = _asset(name) if content_type is not None and _plain_name(name) else None
        if body is None or content_type is None:
            await _plain(send, 404, b"not found")
            return
        await _send(send, 200, body, content_type.encode())

    # -- the API ---------------------------------------------------------------------------

    async def _state(self, scope: Scope, receive: Receive, send: Send) -> None:
        await _json(send, 200, self.connection.state())

    async def _connect(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = await _body(receive)
        target = body.get("target") if isinstance(body, dict) else None
        mode = body.get("mode", "auto") if isinstance(body, dict) else None
        if not _is_target(target) or not isinstance(mode, str):
            await _json(send, 400, {"error": 'give {"target": str, "mode": str}'})
            return
        try:
            state = await self.connection.connect(target, mode)
        except ValueError as exc:
            await _json(send, 400, {"error": str(exc)})
            return
        await _json(send, 200, state)

    async def _disconnect(self, scope: Scope, receive: Receive, send: Send) -> None:
        await _body(receive)
        await _json(send, 200, await self.connection.disconnect())

    async def _request(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = await _body(receive)
        method = body.get("method") if isinstance(body, dict) else None
        params = body.get("params") if isinstance(body, dict) else None
        if not isinstance(method, str) or not isinstance(params, dict | None):
            await _json(send, 400, {"error": 'give {"method": str, "params": {...} | null}'})
            return
        await _json(send, 200, await self.connection.request(method, params))

    async def _answer(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = await _body(receive)
        ask_id = body.get("id") if isinstance(body, dict) else None
        if not isinstance(ask_id, int) or isinstance(ask_id, bool):
            await _json(send, 400, {"error": 'give {"id": int, "result": {...}}'})
            return
        try:
            self.connection.asks.answer(ask_id, body)
        except KeyError:
            await _json(send, 404, {"error": f"no question {ask_id} is waiting"})
        except ValueError as exc:
            await _json(send, 400, {"error": str(exc)})
        else:
            await _json(send, 200, {})

    async def _view(self, scope: Scope, receive: Receive, send: Send) -> None:
        """An MCP Apps view for a tool call the page showed (views.py)."""
        body = await _body(receive)
        body = body if isinstance(body, dict) else {}
        tool, arguments, result = body.get("tool"), body.get("arguments"), body.get("result")
        if not isinstance(tool, str) or not isinstance(arguments, dict | None):
            await _json(send, 400, {"error": 'give {"tool": str, "arguments", "result"}'})
            return
        if not isinstance(result, dict):
            await _json(send, 400, {"error": "give the call's result"})
            return
        try:
            opened = await self.views.open(tool, arguments or {}, result)
        except ViewError as exc:
            await _json(send, 400, {"error": str(exc)})
            return
        await _json(send, 200, opened)

    async def _view_message(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = await _body(receive)
        view_id = body.get("id") if isinstance(body, dict) else None
        if not isinstance(view_id, str):
            await _json(send, 400, {"error": 'give {"id": str, "message": {...}}'})
            return
        try:
            answer = await self.views.receive(view_id, body.get("message"))
        except KeyError:
            await _json(send, 404, {"error": "no such view"})
            return
        await _json(send, 200, answer)

    async def _history(self, scope: Scope, receive: Receive, send: Send) -> None:
        await _json(send, 200, {"messages": self.history.messages})

    async def _history_jsonl(self, scope: Scope, receive: Receive, send: Send) -> None:
        await _send(
            send,
            200,
            self.history.jsonl(),
            b"application/x-ndjson",
            extra=[(b"content-disposition", b'attachment; filename="mcpkit-session.jsonl"')],
        )

    async def _events(self, scope: Scope, receive: Receive, send: Send) -> None:
        queue = self.history.subscribe()
        headers = [(b"content-type", b"text/event-stream"), *SECURITY_HEADERS]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        first = [{"type": "state", **self.connection.state()}, *self.connection.asks.pending()]
        gone = asyncio.ensure_future(_disconnected(receive))
        try:
            await send({"type": "http.response.body", "body": _events(first), "more_body": True})
            while True:
                event = await _next(queue, gone)
                if event is None or gone.done():
                    break  # the browser left, or the stream was ended (shutdown, fell behind)
                chunk = b": keepalive\n\n" if event is QUIET else _events([event])
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            if not gone.done():
                await send({"type": "http.response.body", "body": b""})
        except OSError:
            pass  # the browser went away mid-write
        finally:
            self.history.unsubscribe(queue)
            gone.cancel()


async def _next(queue: asyncio.Queue[JSONObject | None], gone: asyncio.Future[None]) -> Any:
    """The next event; QUIET after KEEPALIVE seconds without one; None when the stream ends."""
    getter: asyncio.Future[Any] = asyncio.ensure_future(queue.get())
    waited: set[asyncio.Future[Any]] = {getter, gone}
    done, _ = await asyncio.wait(waited, timeout=KEEPALIVE, return_when="FIRST_COMPLETED")
    if getter in done:
        return getter.result()
    getter.cancel()
    return QUIET


async def _disconnected(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


def _events(events: list[JSONObject]) -> bytes:
    return b"".join(b"data: " + orjson.dumps(event) + b"\n\n" for event in events)


def _asset(name: str) -> bytes | None:
    """A file of the package's static folder (None when it is not there)."""
    with contextlib.suppress(FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return resources.files("mcpkit.inspector").joinpath("static", name).read_bytes()
    return None


def _plain_name(name: str) -> bool:
    """A file name with no folder part (no way out of the static folder) and no control
    character (a NUL byte makes the file system call raise: a 500, not a 404)."""
    return (
        name.isprintable()
        and bool(name)
        and "/" not in name
        and "\\" not in name
        and not name.startswith(".")
    )


def _is_target(target: Any) -> TypeGuard[str | list[str]]:
    if isinstance(target, str):
        return bool(target.strip())
    return isinstance(target, list) and bool(target) and all(isinstance(a, str) for a in target)


async def _body(receive: Receive) -> Any:
    """The request's JSON body (None when empty, not JSON or too large)."""
    body = bytearray()
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        body.extend(message.get("body", b""))
        if len(body) > MAX_BODY:
            return None
        if not message.get("more_body"):
            break
    try:
        return orjson.loads(body) if body else None
    except orjson.JSONDecodeError:
        return None


async def _json(send: Send, status: int, value: Any) -> None:
    await _send(send, status, orjson.dumps(value), b"application/json")


async def _plain(send: Send, status: int, text: bytes) -> None:
    await _send(send, status, text, b"text/plain; charset=utf-8")


async def _send(
    send: Send,
    status: int,
    body: bytes,
    content_type: bytes,
    *,
    extra: list[tuple[bytes, bytes]] | None = None,
    frames: str = "",
) -> None:
    headers = [(b"content-type", content_type), *SECURITY_HEADERS, *(extra or [])]
    if frames:  # the page: it may frame the sandbox origin of MCP Apps views, nothing else
        headers = [
            (name, value + b"; frame-src " + frames.encode())
            if name == b"content-security-policy"
            else (name, value)
            for name, value in headers
        ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
