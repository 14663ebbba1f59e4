"""`RedisUpstreamSessions`: the gateway's upstream session records (stores/
upstream_sessions.py) in Redis, shared by a proxy's workers.

Layout, under the HTTP state's `prefix`: `{prefix}upstreams:{downstream session id}`, a hash
with one field per upstream (its gateway name; "" for a plain proxy) holding the sealed
record; `{prefix}upstream-expiry:{name}`, a sorted set of session ids scored by when the
downstream session's record (`{prefix}session:{id}`, redis_sessions.py) expires, in epoch ms.
The hash lives as long as that record and `grace` more: scripts copy the record's PTTL onto
it, so every worker agrees on Redis's clock. `record` is one transaction (HSETNX: the first
worker wins), `refresh` one pipeline for all sessions, `claim_expired` two round trips.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection
from typing import Any

from mcpkit.stores.redis_outage import Outage
from mcpkit.stores.redis_sessions import session_key

# KEYS: the hash. ARGV: field, the value a worker read. Deleted only if unchanged since.
_DROP_IF_SAME = """
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
return redis.call('HDEL', KEYS[1], ARGV[1])
"""
# KEYS: the downstream session's record, the hash, the expiry index. ARGV: session id, now
# (ms), grace (ms). The hash lives as long as the record (and `grace` more); the index says
# when the record expires. Nothing written for a record gone (the expiry sweep ends it).
_REFRESH = """
local left = redis.call('PTTL', KEYS[1])
if left < 0 or redis.call('EXISTS', KEYS[2]) == 0 then return 0 end
redis.call('PEXPIRE', KEYS[2], left + tonumber(ARGV[3]))
redis.call('ZADD', KEYS[3], tonumber(ARGV[2]) + left, ARGV[1])
return 1
"""
# KEYS: the downstream session's record, the expiry index, the hash. ARGV: session id, field,
# now (ms), grace (ms). A record still there (used where no upstream client refreshes the
# index) is scored again. Else the entry is claimed (ZREM: one worker) and the upstream
# session's sealed record taken out of the hash (nil: another worker claimed it, or no record).
_CLAIM_EXPIRED = """
local left = redis.call('PTTL', KEYS[1])
if left >= 0 then
  redis.call('ZADD', KEYS[2], 'XX', tonumber(ARGV[3]) + left, ARGV[1])
  redis.call('PEXPIRE', KEYS[3], left + tonumber(ARGV[4]))
  return false
end
if left == -1 then  -- a record that never expires: not for this index
  redis.call('ZREM', KEYS[2], ARGV[1])
  return false
end
if redis.call('ZREM', KEYS[2], ARGV[1]) == 0 then return false end
local sealed = redis.call('HGET', KEYS[3], ARGV[2])
if sealed then redis.call('HDEL', KEYS[3], ARGV[2]) end
return sealed
"""


class RedisUpstreamSessions:
    """The records of upstream `name` ("" for a plain proxy) in the Redis of `client` (a
    `redis.asyncio.Redis`), beside the HTTP state's sessions under `prefix`. `grace`: seconds
    a record outlives its downstream session; `clock`: epoch seconds (the index's scores).
    Every method raises StoreUnavailable when Redis fails (logged once per outage)."""

    def __init__(
        self,
        client: Any,
        prefix: str,
        name: str,
        *,
        grace: float,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._client = client
        self._service = prefix  # the downstream sessions' records: `session_key`
        self._prefix = prefix + "upstreams:"
        self._index = f"{prefix}upstream-expiry:{name}"
        self._field = name
        self._grace_ms = round(grace * 1000)
        self._clock = clock
        self._drop = client.register_script(_DROP_IF_SAME)
        self._refresh_one = client.register_script(_REFRESH)
        self._claim = client.register_script(_CLAIM_EXPIRED)
        self._outage = Outage("the upstream session store")

    def _key(self, session_id: str) -> str:
        return self._prefix + session_id

    def _now_ms(self) -> int:
        return round(self._clock() * 1000)

    async def get(self, session_id: str) -> bytes | None:
        with self._outage:
            sealed: bytes | None = await self._client.hget(self._key(session_id), self._field)
        return sealed

    async def record(self, session_id: str, sealed: bytes, ttl: float | None) -> bytes:
        key = self._key(session_id)
        with self._outage:
            async with self._client.pipeline(transaction=True) as pipe:
                pipe.hsetnx(key, self._field, sealed)
                pipe.hget(key, self._field)
                if ttl is not None:
                    ttl_ms = max(1, round(ttl * 1000))
                    pipe.pexpire(key, ttl_ms + self._grace_ms)
                    pipe.zadd(self._index, {session_id: self._now_ms() + ttl_ms})
                _, kept, *_ = await pipe.execute()
        return bytes(kept)

    async def drop(self, session_id: str, sealed: bytes) -> bool:
        with self._outage:
            return bool(await self._drop(keys=[self._key(session_id)], args=[self._field, sealed]))

    async def take(self, session_id: str) -> bytes | None:
        key = self._key(session_id)
        with self._outage:
            async with self._client.pipeline(transaction=True) as pipe:
                pipe.hget(key, self._field)
                pipe.hdel(key, self._field)
                pipe.zrem(self._index, session_id)
                sealed, *_ = await pipe.execute()
        return None if sealed is None else bytes(sealed)

    async def refresh(self, session_ids: Collection[str]) -> None:
        if not session_ids:
            return
        now = self._now_ms()
        with self._outage:
            async with self._client.pipeline(transaction=False) as pipe:
                for session_id in session_ids:
                    keys = [self._session(session_id), self._key(session_id), self._index]
                    args = [session_id, now, self._grace_ms]
                    await self._refresh_one(keys=keys, args=args, client=pipe)  # queued
                await pipe.execute()

    async def claim_expired(self, limit: int) -> list[tuple[str, bytes | None]]:
        now = self._now_ms()
        with self._outage:
            due = await self._client.zrangebyscore(self._index, "-inf", now, 0, limit)
            if not due:
                return []
            ids = [_text(session_id) for session_id in due]
            async with self._client.pipeline(transaction=False) as pipe:
                for session_id in ids:
                    keys = [self._session(session_id), self._index, self._key(session_id)]
                    args = [session_id, self._field, now, self._grace_ms]
                    await self._claim(keys=keys, args=args, client=pipe)  # queued
                claimed = await pipe.execute()
        return [
            (session_id, None if sealed is None else bytes(sealed))
            for session_id, sealed in zip(ids, claimed, strict=True)
        ]

    def _session(self, session_id: str) -> str:
        return session_key(self._service, session_id)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
