"""`RateLimit`: a token bucket per principal, session, tool (or any key), in this process
(`LocalBuckets`) or shared by every worker through Redis (`RedisBuckets`).

A bucket holds up to `burst` tokens and refills at `rate` tokens per second; each request
takes one. A request that finds its bucket empty is refused with -32000 "Rate limit
exceeded", `data: {"retryAfter": seconds}` (when one token will be there). The buckets
themselves are stores (mcpkit.stores.rate_limits): this module is the policy, what is
limited under which key and what a refusal or a store's outage answers.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection
from typing import Any

from mcpkit.errors import ProtocolError
from mcpkit.server.middleware.base import CallNext, Middleware, MiddlewareContext
from mcpkit.stores import StoreUnavailable
from mcpkit.stores.rate_limits import MemoryRateBuckets, RateBuckets, RedisRateBuckets

__all__ = ["Buckets", "LocalBuckets", "RateLimit", "RedisBuckets", "RATE_LIMITED"]

RATE_LIMITED = -32000
logger = logging.getLogger("mcpkit.ratelimit")

# The names this module gave the stores before they moved to mcpkit.stores.rate_limits.
Buckets = RateBuckets
LocalBuckets = MemoryRateBuckets


class RedisBuckets(RedisRateBuckets):
    """`RedisRateBuckets` (mcpkit.stores.rate_limits) under the name and with the arguments
    it had here: `fail_open`, now `RateLimit`'s, is still taken and read by the `RateLimit`
    given these buckets, unless that `RateLimit` is given its own."""

    def __init__(
        self,
        redis: Any,
        *,
        prefix: str = "mcpkit:rate:",
        timeout: float = 1.0,
        fail_open: bool = True,
    ) -> None:
        super().__init__(redis, prefix=prefix, timeout=timeout)
        self.fail_open = fail_open


def _principal_key(mctx: MiddlewareContext) -> str:
    principal = mctx.principal
    if principal is not None:
        return "p:" + principal.key
    return _session_key(mctx)


def _session_key(mctx: MiddlewareContext) -> str:
    session_id = mctx.session_id
    if session_id is not None:
        return "s:" + session_id
    if mctx.request is not None and mctx.request.envelope is not None:
        return "anonymous"  # a 2026-07-28 request belongs to no session
    return f"c:{id(mctx.peer)}"  # this process's connection (stdio, in memory)


def _tool_key(mctx: MiddlewareContext) -> str:
    return "t:" + (mctx.name or mctx.method)


_KEYS: dict[str, Callable[[MiddlewareContext], str]] = {
    "principal": _principal_key,
    "session": _session_key,
    "tool": _tool_key,
    "global": lambda mctx: "all",
}


class RateLimit(Middleware):
    """A token bucket per `per`: "principal" (the authenticated caller; without
    authorization, its session), "session" (the HTTP session, the stdio or in-memory
    connection; 2026-07-28 requests, which have none, share one bucket), "tool" (each tool
    or prompt by name, across callers), "global", or a function of the `MiddlewareContext`
    returning the key.

    `rate` tokens per second, `burst` at most (default: max(1, rate)). `methods`: the
    requests limited (default: all of them; e.g. {"tools/call"}). `buckets`: `LocalBuckets()`
    (default, this process) or `RedisBuckets(url)` (every worker). `name` namespaces the keys
    when a server has several limits sharing one store. `fail_open` (default True, or the
    `fail_open` given to `RedisBuckets`): when the store fails (StoreUnavailable), let the
    request through; False refuses it with -32603. Either way one warning on
    `mcpkit.ratelimit` says the outage began and one line that it ended.

    Raises ValueError for a rate or burst that is not positive, or an unknown `per`.
    """

    def __init__(
        self,
        rate: float,
        *,
        burst: float | None = None,
        per: str | Callable[[MiddlewareContext], str] = "principal",
        methods: Collection[str] | None = None,
        buckets: Buckets | None = None,
        name: str = "",
        fail_open: bool | None = None,
    ) -> None:
        burst = max(1.0, rate) if burst is None else burst
        if not rate > 0 or not burst >= 1:
            raise ValueError(f"rate must be > 0 and burst >= 1, not {rate!r} and {burst!r}")
        if isinstance(per, str) and per not in _KEYS:
            raise ValueError(f"per is one of {sorted(_KEYS)} or a function, not {per!r}")
        self.rate = float(rate)
        self.burst = float(burst)
        self._key = _KEYS[per] if isinstance(per, str) else per
        self.methods = None if methods is None else frozenset(methods)
        self.buckets: Buckets = LocalBuckets() if buckets is None else buckets
        self._prefix = f"{name}:" if name else ""
        if fail_open is None:  # RedisBuckets(url, fail_open=...), the older spelling
            fail_open = getattr(self.buckets, "fail_open", True)
        self.fail_open = bool(fail_open)
        self._outage = False  # logged once per outage, not once per request

    async def on_request(self, mctx: MiddlewareContext, call_next: CallNext) -> Any:
        if self.methods is None or mctx.method in self.methods:
            key = self._prefix + self._key(mctx)
            try:
                wait = await self.buckets.take(key, self.rate, self.burst)
            except StoreUnavailable as failure:  # its message names no URL
                wait = self._unavailable(failure)
            else:
                if self._outage:
                    self._outage = False
                    logger.warning("the rate limit store answers again: limits applied")
            if wait > 0:
                raise ProtocolError(
                    RATE_LIMITED,
                    "Rate limit exceeded",
                    {"retryAfter": round(wait, 3)},
                )
        return await call_next(mctx)

    def _unavailable(self, failure: StoreUnavailable) -> float:
        """The answer to a request the store could not count: through (0.0) or -32603."""
        if not self._outage:
            self._outage = True
            answer = "let through" if self.fail_open else "refused"
            logger.warning(
                "requests %s by the rate limit until its store answers: %s", answer, failure
            )
        if self.fail_open:
            return 0.0
        raise ProtocolError(-32603, "Internal error: rate limit store unavailable") from None
