"""The middleware chain: `Middleware`, what each hook sees (`MiddlewareContext`), and `Chain`.

A middleware is an object with any of these async hooks, each `(mctx, call_next)`, returning
the result (a request) or None (a notification):

- `on_message`: every request and notification;
- `on_request` / `on_notification`: every request / every notification;
- `on_call_tool`, `on_read_resource`, `on_get_prompt`, `on_list_tools`, `on_list_resources`,
  `on_list_resource_templates`, `on_list_prompts`: those methods only.

For one message, each middleware's hooks run outermost first in that order (message, then
request, then the method's own), and the server's middleware in the order they were added: the
first added sees the request first and the answer last. A hook may read and change
`mctx.params` (the handler gets the changed params), answer itself (return a result without
calling `call_next`, or raise `ProtocolError`), time, log, look at `mctx.context`.

What a server with no middleware pays is one `if` per request: a chain is only made when a
middleware is added, and per method it only holds the hooks a middleware overrides, so a
method no hook names is served as if there were no chain.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING, Any

import orjson

from mcpkit.protocol import Prepared, RequestReceived
from mcpkit.server.context import Context
from mcpkit.types.eras import Era

if TYPE_CHECKING:
    from mcpkit.runtime import Peer, Principal

__all__ = ["CallNext", "Chain", "Middleware", "MiddlewareContext", "TYPED_HOOKS"]

JSONObject = dict[str, Any]
CallNext = Callable[["MiddlewareContext"], Awaitable[Any]]
Hook = Callable[["MiddlewareContext", CallNext], Awaitable[Any]]
# The server's own handling of a request once the chain has run: (peer, request) -> outcome.
Terminal = Callable[["Peer", RequestReceived], Any]

# The methods with a hook of their own, and its name.
TYPED_HOOKS = {
    "tools/call": "on_call_tool",
    "resources/read": "on_read_resource",
    "prompts/get": "on_get_prompt",
    "tools/list": "on_list_tools",
    "resources/list": "on_list_resources",
    "resources/templates/list": "on_list_resource_templates",
    "prompts/list": "on_list_prompts",
}


class MiddlewareContext:
    """One message going through the chain: its `method` and `params` (change them, or
    assign a new dict, and the handler gets those), `kind` ("request" or "notification"),
    the `server` handling it, the client's `peer`, `started` (time.monotonic() on entry) and,
    for a request, the handler's view of it: `context` (an `mcpkit.Context`: principal,
    session state, era, client info, ways to talk back)."""

    __slots__ = ("_context", "kind", "method", "params", "peer", "request", "server", "started")

    def __init__(
        self, server: Any, peer: Peer, method: str, params: JSONObject, *, kind: str,
        request: RequestReceived | None,
    ) -> None:  # fmt: skip
        self.server = server
        self.peer = peer
        self.method = method
        self.params = params
        self.kind = kind
        self.request = request
        self.started = time.monotonic()
        self._context: Context | None = None

    @property
    def context(self) -> Context | None:
        """The request's `Context` (made on first use); None for a notification."""
        if self._context is None and self.request is not None:
            self._context = Context(self.server, self.peer, self.request)
        return self._context

    @property
    def principal(self) -> Principal | None:
        """Who is calling, as the transport authenticated them (None without authorization)."""
        return self.peer.principal

    @property
    def session_id(self) -> str | None:
        """The client's HTTP session id (Mcp-Session-Id); None over stdio, in memory, and for
        a request of no session (2026-07-28, a stateless endpoint)."""
        transport = getattr(self.peer, "transport", None)
        session_id = getattr(transport, "session_id", None)
        return session_id if type(session_id) is str else None

    @property
    def era(self) -> Era:
        """`Era.PER_REQUEST` for a 2026-07-28 request, `Era.HANDSHAKE` otherwise."""
        if self.request is not None and self.request.envelope is not None:
            return Era.PER_REQUEST
        return Era.HANDSHAKE

    @property
    def name(self) -> str | None:
        """The tool's or prompt's name (tools/call, prompts/get), else None."""
        name = self.params.get("name")
        return name if type(name) is str else None

    @property
    def elapsed(self) -> float:
        """Seconds since the message entered the chain."""
        return time.monotonic() - self.started


class Middleware:
    """Base class of a middleware: override the hooks you need (see the module docstring);
    each default passes the message on. `attach(server)` is called once per server the
    middleware is added to (set up what it needs there, e.g. a cache's invalidation)."""

    def attach(self, server: Any) -> None:
        """Called by `server.add_middleware(self)`; nothing by default."""

    async def on_message(self, mctx: MiddlewareContext, call_next: CallNext) -> Any:
        return await call_next(mctx)

    async def on_request(self, mctx: MiddlewareContext, call_next: CallNext) -> Any:
        return await call_next(mctx)

    async def on_notification(self, mctx: MiddlewareContext, call_next: CallNext) -> Any:
        return await call_next(mctx)

    async def on_call_tool(self, mctx: MiddlewareContext, call_next: CallNext) -> Any:
        return await call_next(mctx)

    async def on_read_resource(self, mctx: MiddlewareContext, call_next: CallNext) -> Any:
        return await call_next(mctx)

    async def on_get_prompt(self, mctx: MiddlewareContext, call_next: CallNext) -> Any:
        return await call_next(mctx)

    async def on_list_tools(self, mctx: MiddlewareContext, call_next: CallNext) -> Any:
        return await call_next(mctx)

    async def on_list_resources(self, mctx: MiddlewareContext, call_next: CallNext) -> Any:
        return await call_next(mctx)

    async def on_list_resource_templates(self, mctx: MiddlewareContext, call_next: CallNext) -> Any:
        return await call_next(mctx)

    async def on_list_prompts(self, mctx: MiddlewareContext, call_next: CallNext) -> Any:
        return await call_next(mctx)


def _hooks_of(middleware: Any, method: str, kind: str) -> list[Hook]:
    """The hooks of `middleware` for `method`, outermost first: only those it overrides (a
    plain object's hooks count when it has them)."""
    names = ["on_message", "on_request" if kind == "request" else "on_notification"]
    typed = TYPED_HOOKS.get(method) if kind == "request" else None
    if typed is not None:
        names.append(typed)
    hooks = []
    for name in names:
        hook = getattr(middleware, name, None)
        if hook is None or getattr(type(middleware), name, None) is getattr(Middleware, name):
            continue
        hooks.append(hook)
    return hooks


class Chain:
    """A server's middleware, in order, and per (method, kind) the hooks that apply."""

    __slots__ = ("_plans", "middleware")

    def __init__(self) -> None:
        self.middleware: list[Any] = []
        self._plans: dict[tuple[str, str], tuple[Hook, ...]] = {}

    def add(self, middleware: Any) -> None:
        self.middleware.append(middleware)
        self._plans.clear()

    def plan(self, method: str, kind: str = "request") -> tuple[Hook, ...]:
        key = (method, kind)
        hooks = self._plans.get(key)
        if hooks is None:
            found = [h for m in self.middleware for h in _hooks_of(m, method, kind)]
            hooks = self._plans[key] = tuple(found)
        return hooks

    def request(self, server: Any, peer: Peer, request: RequestReceived, terminal: Terminal) -> Any:
        """Serve `request` through the hooks for its method, then `terminal`; with no hook
        for the method, `terminal` itself (its outcome as it is)."""
        hooks = self.plan(request.method)
        if not hooks:
            return terminal(peer, request)
        mctx = MiddlewareContext(
            server, peer, request.method, request.params or {}, kind="request", request=request
        )
        return _run(hooks, 0, partial(_final_request, terminal), mctx)

    def notification(
        self, server: Any, peer: Peer, method: str, params: JSONObject | None
    ) -> Awaitable[Any] | None:
        """Run the notification hooks for `method` (the server itself does nothing with the
        notifications that reach it); None when there are none."""
        hooks = self.plan(method, "notification")
        if not hooks:
            return None
        mctx = MiddlewareContext(
            server, peer, method, params or {}, kind="notification", request=None
        )
        return _run(hooks, 0, _final_notification, mctx)

    def around(
        self, server: Any, ctx: Context, method: str, params: JSONObject,
        serve: Callable[[JSONObject, Context], Any],
    ) -> Any:  # fmt: skip
        """Run `method`'s hooks around `serve(params, ctx)` (a mounted server's item served
        by its parent: the mounted server's own middleware, inside the parent's); `serve`
        itself when there are none."""
        hooks = self.plan(method)
        if not hooks:
            return serve(params, ctx)
        mctx = MiddlewareContext(
            server, ctx.peer, method, params, kind="request", request=ctx.request
        )
        mctx._context = ctx

        async def final(m: MiddlewareContext) -> Any:
            return await _settled(serve(m.params, ctx))

        return _run(hooks, 0, final, mctx)


async def _run(
    hooks: tuple[Hook, ...], index: int, final: CallNext, mctx: MiddlewareContext
) -> Any:
    if index == len(hooks):
        return await final(mctx)
    return await hooks[index](mctx, partial(_run, hooks, index + 1, final))


async def _final_request(terminal: Terminal, mctx: MiddlewareContext) -> Any:
    request = mctx.request
    assert request is not None
    if mctx.params is not request.params:  # changed (or made: the request had none)
        request = RequestReceived(
            request.id, request.method, mctx.params, request.progress_token, request.envelope
        )
        mctx.request = request
    return await _settled(terminal(mctx.peer, request))


async def _final_notification(mctx: MiddlewareContext) -> None:
    return None


async def _settled(outcome: Any) -> Any:
    """A handler's outcome as a result dict (awaited; a pre-serialized one decoded)."""
    if inspect.isawaitable(outcome):
        outcome = await outcome
    if type(outcome) is Prepared:
        return orjson.loads(outcome.json)
    return outcome
