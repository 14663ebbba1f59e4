"""`RedisHomeRecords`: the gateway's home records (stores/home_records.py) in Redis.

Layout: `{prefix}home:{space}:{key}`, a string expiring with its ttl (whole seconds, at
least one). `write` and `read` (MGET) are one round trip each.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from mcpkit.stores.redis_outage import Outage


class RedisHomeRecords:
    """Home records of `space` in the Redis of `client` (a `redis.asyncio.Redis`), keys
    under `prefix`. Both methods raise StoreUnavailable when Redis fails (logged once per
    outage)."""

    def __init__(self, client: Any, prefix: str, space: str) -> None:
        self._client = client
        self._prefix = f"{prefix}home:{space}:"
        self._outage = Outage("the home records")

    async def write(self, key: str, record: bytes, ttl: float) -> None:
        with self._outage:
            await self._client.set(self._prefix + key, record, ex=max(1, math.ceil(ttl)))

    async def read(self, keys: Sequence[str]) -> list[bytes | None]:
        if not keys:
            return []
        with self._outage:
            found: list[bytes | None] = await self._client.mget([self._prefix + k for k in keys])
        return found
