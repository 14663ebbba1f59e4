"""Client-side response cache for MCP 2026-07-28 (server/utilities/caching).

Pure bookkeeping: no I/O, no clock. The caller passes `now` (seconds, any monotonic origin) so
freshness is testable and the cache never guesses the time.

Rules carried from the spec:

- Only `complete` results of the cacheable methods are stored; `input_required` interim results
  and results of multi round-trip retries (params with `inputResponses` or `requestState`)
  never are, because they depend on inputs outside the key.
- The key is the method plus the canonical JSON of the params without `_meta`, so each page
  (`cursor`) and each `uri` is its own entry, and request metadata (progress tokens, trace
  ids) does not split the cache.
- `ttlMs` is a freshness hint: absent, zero, negative or non-numeric means immediately stale,
  so nothing is stored. Fresh while `now < t_received + ttlMs / 1000`.
- `cacheScope: "private"` (also the fallback for missing or unknown scopes, the safe side)
  entries only serve the authorization context that fetched them; `"public"` ones serve all.
- Change notifications drop the entries they make stale.
"""

from __future__ import annotations

import copy
import math
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Final

import orjson

from mcpkit.protocol.per_request import CACHEABLE_METHODS

__all__ = ["ResponseCache"]

# Params that mark a multi round-trip retry; their answers depend on inputs outside the key.
_RETRY_PARAMS: Final = ("inputResponses", "requestState")

# Which cached methods each change notification makes stale.
_LIST_CHANGED: Final[dict[str, frozenset[str]]] = {
    "notifications/tools/list_changed": frozenset({"tools/list"}),
    "notifications/prompts/list_changed": frozenset({"prompts/list"}),
    "notifications/resources/list_changed": frozenset(
        {"resources/list", "resources/templates/list"}
    ),
}
_RESOURCE_UPDATED: Final = "notifications/resources/updated"

# Scope part of a key: a public entry, or a private one bound to an auth context (None = anon).
_Scope = tuple[bool, str | None]
_Key = tuple[str, bytes, _Scope]
_PUBLIC: Final[_Scope] = (True, None)


@dataclass(slots=True)
class _Entry:
    result: dict[str, Any]
    received: float
    expires: float
    uri: str | None


def _canonical(params: dict[str, Any] | None) -> bytes | None:
    """Params as sorted-key JSON without `_meta`; None when they cannot be serialised."""
    body = {k: v for k, v in (params or {}).items() if k != "_meta"}
    try:
        return orjson.dumps(body, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # orjson.JSONEncodeError subclasses TypeError
        return None


def _ttl_seconds(result: dict[str, Any]) -> float | None:
    """The positive, finite TTL in seconds, or None when the result is immediately stale."""
    ttl = result.get("ttlMs")
    if isinstance(ttl, bool) or not isinstance(ttl, int | float):
        return None
    if not math.isfinite(ttl) or ttl <= 0:
        return None
    return ttl / 1000


class ResponseCache:
    """Bounded LRU cache of fresh results, keyed by method, params and authorization context."""

    def __init__(self, max_entries: int = 1024) -> None:
        if max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        self._max = max_entries
        self._entries: OrderedDict[_Key, _Entry] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def get(
        self,
        method: str,
        params: dict[str, Any] | None,
        *,
        now: float,
        auth: str | None = None,
    ) -> dict[str, Any] | None:
        """A fresh cached result for exactly this request as seen by `auth`, else None.

        Both a public entry and this context's private entry may exist; the newer one wins,
        since it is the server's latest word. Stale entries met on the way are dropped.
        """
        if method not in CACHEABLE_METHODS:
            return None
        canon = _canonical(params)
        if canon is None:
            return None
        best: tuple[_Key, _Entry] | None = None
        for scope in (_PUBLIC, (False, auth)):
            key = (method, canon, scope)
            entry = self._entries.get(key)
            if entry is None:
                continue
            if now >= entry.expires:
                del self._entries[key]
                continue
            if best is None or entry.received > best[1].received:
                best = (key, entry)
        if best is None:
            return None
        self._entries.move_to_end(best[0])
        # A copy, so a caller editing its result cannot change what later callers get.
        return copy.deepcopy(best[1].result)

    def put(
        self,
        method: str,
        params: dict[str, Any] | None,
        result: dict[str, Any],
        *,
        now: float,
        auth: str | None = None,
    ) -> None:
        """Store `result` if the spec lets it be reused; otherwise leave the cache as it was.

        A complete result that is immediately stale (no usable `ttlMs`) still drops what this
        context had cached for the same request: the server's newer answer says not to reuse.
        """
        if method not in CACHEABLE_METHODS:
            return
        if params is not None and any(p in params for p in _RETRY_PARAMS):
            return
        if result.get("resultType", "complete") != "complete":
            return
        canon = _canonical(params)
        if canon is None:
            return
        scope: _Scope = _PUBLIC if result.get("cacheScope") == "public" else (False, auth)
        ttl = _ttl_seconds(result)
        if ttl is None:
            self._entries.pop((method, canon, _PUBLIC), None)
            self._entries.pop((method, canon, (False, auth)), None)
            return
        uri = params.get("uri") if params is not None else None
        key = (method, canon, scope)
        self._entries[key] = _Entry(
            result=copy.deepcopy(result),
            received=now,
            expires=now + ttl,
            uri=uri if isinstance(uri, str) else None,
        )
        self._entries.move_to_end(key)
        while len(self._entries) > self._max:
            self._entries.popitem(last=False)

    def invalidate(self, notification_method: str, params: dict[str, Any] | None = None) -> int:
        """Drop the entries a change notification makes stale; returns how many went.

        `list_changed` notifications drop every page of their lists (for resources, templates
        too); `resources/updated` drops the `resources/read` entries for its `uri`. Other
        notifications drop nothing.
        """
        methods = _LIST_CHANGED.get(notification_method)
        if methods is not None:
            doomed = [k for k in self._entries if k[0] in methods]
        elif notification_method == _RESOURCE_UPDATED:
            uri = (params or {}).get("uri")
            if not isinstance(uri, str):
                return 0
            doomed = [
                k for k, e in self._entries.items() if k[0] == "resources/read" and e.uri == uri
            ]
        else:
            return 0
        for key in doomed:
            del self._entries[key]
        return len(doomed)

    def clear(self) -> None:
        """Forget everything, e.g. when the session or the credentials change."""
        self._entries.clear()
