"""Rate-limit buckets: `RateBuckets`, kept in this process (`MemoryRateBuckets`) or in Redis
for every worker (`RedisRateBuckets`, `mcpkit[redis]`).

A bucket holds up to `burst` tokens and refills at `rate` tokens per second; `take` takes one
and answers 0.0, or takes nothing and answers the seconds until one will be there. What is
limited, under which key, and what a refusal or an outage answers is the policy of
`mcpkit.server.middleware.RateLimit`, not the store's.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Protocol

from mcpkit.stores.redis_client import Unavailable, connect

__all__ = ["MemoryRateBuckets", "RateBuckets", "RedisRateBuckets"]


class RateBuckets(Protocol):
    """Where the buckets live."""

    async def take(self, key: str, rate: float, burst: float) -> float:
        """Take one token from `key`'s bucket: 0.0 when taken, else the seconds until one
        will be there (nothing taken). Raises StoreUnavailable when the store fails."""
        ...


class MemoryRateBuckets:
    """Buckets in this process (one worker). At most `max_keys` are kept, the least
    recently used dropped first (a dropped bucket starts full again)."""

    def __init__(self, max_keys: int = 100_000, clock: Callable[[], float] = time.monotonic):
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()
        self.max_keys = max_keys
        self._clock = clock

    async def take(self, key: str, rate: float, burst: float) -> float:
        return self.take_now(key, rate, burst)

    def take_now(self, key: str, rate: float, burst: float) -> float:
        """`take`, without awaiting (this store never waits)."""
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


class RedisRateBuckets:
    """Buckets in Redis, shared by every worker: one atomic script call per `take`, waits
    counted in whole milliseconds.

    `redis`: a URL (connected with `mcpkit.stores.redis_client.connect`, every reply bounded
    by `timeout` s) or a `redis.asyncio.Redis` you made (e.g. the one of your `RedisState`).
    `prefix` namespaces the keys. When Redis fails, `take` raises StoreUnavailable naming
    the kind of failure, never the URL.
    """

    def __init__(self, redis: Any, *, prefix: str = "mcpkit:rate:", timeout: float = 1.0) -> None:
        self._redis = connect(redis, timeout=timeout) if isinstance(redis, str) else redis
        self.prefix = prefix
        self._script: Any = None

    async def take(self, key: str, rate: float, burst: float) -> float:
        script = self._script
        if script is None:
            script = self._script = self._redis.register_script(_TAKE)
        with Unavailable("the rate limit store"):
            wait = await script(keys=[self.prefix + key], args=[rate, burst])
        return int(wait) / 1000

    async def aclose(self) -> None:
        await self._redis.aclose()
