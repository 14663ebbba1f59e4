"""`ListCache`: list results (tools, prompts, resources, templates) served from memory until
the list changes."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from mcpkit.server.middleware.base import CallNext, Middleware, MiddlewareContext

__all__ = ["ListCache"]

# Which list each method answers (the server counts changes by these kinds).
_KIND = {
    "tools/list": "tool",
    "prompts/list": "prompt",
    "resources/list": "resource",
    "resources/templates/list": "resource",
}


class ListCache(Middleware):
    """Answer tools/list, prompts/list, resources/list and resources/templates/list from a
    cache kept per page (cursor), protocol revision and, when the server hides what a caller
    may not use (`hide_out_of_scope`), per caller's scopes.

    An entry is dropped when its list changes on the server (a registration, a mounted
    server's change, another worker's change heard through the shared state: whatever sends
    list_changed, a proxy's shared upstream session), and after `ttl` seconds if given
    (default None: only on change). A server whose lists may differ per session (a proxy
    whose clients each have an upstream session of their own: `lists_per_session`) is
    cached per session and only with a `ttl` (nothing tells this cache when one session's
    upstream changes its lists); without one its lists pass through. At most `max_entries`
    are kept (the oldest dropped first). Answers are shared: a middleware outside this one
    must copy a result before changing it.

    Raises ValueError for a `ttl` or `max_entries` that is not positive.
    """

    def __init__(
        self,
        ttl: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        max_entries: int = 4096,
    ):
        if ttl is not None and not ttl > 0:
            raise ValueError(f"ttl is a positive number of seconds, not {ttl!r}")
        if max_entries < 1:
            raise ValueError(f"max_entries is a positive count, not {max_entries!r}")
        self.ttl = ttl
        self.max_entries = max_entries
        self._clock = clock
        self._entries: dict[tuple[Any, ...], tuple[int, float, Any]] = {}
        self.hits = 0
        self.misses = 0

    async def on_request(self, mctx: MiddlewareContext, call_next: CallNext) -> Any:
        kind = _KIND.get(mctx.method)
        cursor = mctx.params.get("cursor")
        if kind is None or (cursor is not None and type(cursor) is not str):
            return await call_next(mctx)
        server = mctx.server
        session = self._session(mctx)
        if session is not None and self.ttl is None:
            return await call_next(mctx)  # per-session lists, and no word when they change
        version = server.list_version(kind)
        key = self._key(mctx, session)
        entry = self._entries.get(key)
        now = self._clock()
        if entry is not None and entry[0] == version and (self.ttl is None or now < entry[1]):
            self.hits += 1
            return dict(entry[2])  # a copy: what serves it may add to it (_meta, ttlMs)
        self.misses += 1
        result = await call_next(mctx)
        expires = now + self.ttl if self.ttl is not None else 0.0
        if type(result) is dict:
            entries = self._entries
            entries.pop(key, None)  # kept in insertion order: the oldest first
            entries[key] = (version, expires, dict(result))
            if len(entries) > self.max_entries:
                del entries[next(iter(entries))]
        return result

    @staticmethod
    def _session(mctx: MiddlewareContext) -> str | None:
        """The session whose lists these are, when the server's lists differ per session."""
        if not getattr(mctx.server, "lists_per_session", False):
            return None
        context = mctx.context
        state = None if context is None else context.state
        return None if state is None else state.key

    def _key(self, mctx: MiddlewareContext, session: str | None) -> tuple[Any, ...]:
        context = mctx.context
        assert context is not None
        cursor = mctx.params.get("cursor")
        scopes: Any = None
        if getattr(mctx.server, "hide_out_of_scope", False):
            principal = mctx.principal
            scopes = None if principal is None else frozenset(principal.scopes)
        return (id(mctx.server), mctx.method, cursor, context.protocol_version, scopes, session)

    def clear(self) -> None:
        """Drop every entry."""
        self._entries.clear()
