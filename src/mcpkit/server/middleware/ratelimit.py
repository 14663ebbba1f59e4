"""`RateLimit`: a token bucket per principal, session, tool (or any key), in this process
(`LocalBuckets`) or shared by every worker through Redis (`RedisBuckets`).

A bucket holds up to `burst` tokens and refills at `rate` tokens per second; each request
takes one. A request that finds its bucket empty is refused with -32000 "Rate limit
exceeded", `data: {"retryAfter": seconds}` (when one token will be there).
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Collection
from typing import Any, Protocol

from mcpkit.errors import ProtocolError
from mcpkit.server.middleware.base import CallNext, Middleware, MiddlewareContext
from mcpkit.stores.redis_client import StateUnavailable, Unavailable, connect

__all__ = ["Buckets", "LocalBuckets", "RateLimit", "RedisBuckets", "RATE_LIMITED"]

RATE_LIMITED = -32000
logger = logging.getLogger("mcpkit.ratelimit")


class Buckets(Protocol):
    """Where the buckets live."""

    async def take(self, key: str, rate: float, burst: float) -> float:
        """Take one token from `key`'s bucket: 0.0 when taken, else the seconds until one
        will be there (nothing taken)."""
        ...


class LocalBuckets:
    """Buckets in this process (one worker). At most `max_keys` are kept, the least
    recently used dropped first (a dropped bucket starts full again)."""

    def __init__(self, max_keys: int = 100_000, clock: Callable[[], float] = time.monotonic):
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()
        self.max_keys = max_keys
        self._clock = clock

    async def take(self, key: str, rate: float, burst: float) -> float:
        return self.take_now(key, rate, burst)

    def take_now(self, key: str, rate: float, burst: float) -> float:
        now = self._clock()
        buckets = self._buckets
        tokens, then = buckets.pop(key, (burst, now))
        tokens = min(burst, tokens + (now - then) * rate)
        wait = 0.0
        if tokens >= 1:
            tokens -= 1
        else:
            wait = (1 - tokens) / rate
        buckets[key] = (tokens, now)
        if len(buckets) > self.max_keys:
            buckets.popitem(last=False)
        return wait


# One bucket, atomically: a hash {tokens, at} refilled to now (Redis's own clock, so the
# workers' clocks do not matter), one token taken if there is one, kept for as long as it
# takes to refill (then it is full again, as if absent). Returns the wait in ms (0: taken).
_TAKE = """
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local now_parts = redis.call('TIME')
local now = tonumber(now_parts[1]) * 1000 + math.floor(tonumber(now_parts[2]) / 1000)
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1])
local at = tonumber(state[2])
if tokens == nil or at == nil then
  tokens = burst
  at = now
end
tokens = math.min(burst, tokens + math.max(0, now - at) * rate / 1000)
local wait = 0
if tokens >= 1 then
  tokens = tokens - 1
else
  wait = math.ceil((1 - tokens) * 1000 / rate)
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', now)
redis.call('PEXPIRE', KEYS[1], math.ceil(burst * 1000 / rate) + 1000)
return wait
"""


class RedisBuckets:
    """Buckets in Redis, shared by every worker: one atomic script call per request.

    `redis`: a URL (connected with `mcpkit.stores.redis_client.connect`, every reply bounded
    by `timeout` s) or a `redis.asyncio.Redis` you made (e.g. the one of your `RedisState`).
    `prefix` namespaces the keys. `fail_open` (default True): when Redis fails, let the
    request through and log a warning (rate limiting is not worth an outage); False refuses
    it with -32603 instead.
    """

    def __init__(
        self,
        redis: Any,
        *,
        prefix: str = "mcpkit:rate:",
        timeout: float = 1.0,
        fail_open: bool = True,
    ) -> None:
        self._redis = connect(redis, timeout=timeout) if isinstance(redis, str) else redis
        self.prefix = prefix
        self.fail_open = fail_open
        self._script: Any = None

    async def take(self, key: str, rate: float, burst: float) -> float:
        script = self._script
        if script is None:
            script = self._script = self._redis.register_script(_TAKE)
        try:
            with Unavailable("the rate limit store"):
                wait = await script(keys=[self.prefix + key], args=[rate, burst])
        except StateUnavailable as exc:  # its message names no URL
            if self.fail_open:
                logger.warning("rate limit not applied: %s", exc)
                return 0.0
            raise ProtocolError(-32603, "Internal error: rate limit store unavailable") from None
        return int(wait) / 1000

    async def aclose(self) -> None:
        await self._redis.aclose()


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
    when a server has several limits sharing one store.

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

    async def on_request(self, mctx: MiddlewareContext, call_next: CallNext) -> Any:
        if self.methods is None or mctx.method in self.methods:
            key = self._prefix + self._key(mctx)
            wait = await self.buckets.take(key, self.rate, self.burst)
            if wait > 0:
                raise ProtocolError(
                    RATE_LIMITED,
                    "Rate limit exceeded",
                    {"retryAfter": round(wait, 3)},
                )
        return await call_next(mctx)
