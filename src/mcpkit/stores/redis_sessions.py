"""`RedisSessionStore`: handshake-era HTTP sessions as records in Redis, so that any worker
pointing at the same Redis serves any session (`pip install 'mcpkit[redis]'`).

Layout (every key under `prefix`):
- `session:{id}`: a hash. `owner` (who opened it: "p:" + the principal's key, "" for
  nobody), `version`, `capabilities` and `info` (the client's, as JSON), `level` (its log
  level), one `sub:{uri}` field per resource subscription, and `gen`, a counter bumped by
  every change so a worker knows when its cached copy went stale. It expires after the idle
  timeout; every request refreshes that (PEXPIRE), so a session expires on every worker at
  once, and a DELETE on one worker is seen by all.
- `sessions`: a sorted set of session ids by when they expire: the cap counts it.
- `subscribers:{uri}`: a set of the ids of the sessions subscribed to `uri` (a session gone
  leaves it when `subscribers` next reads it): a worker holding no copy of a session finds
  there whom a resource update it makes concerns.

Each call is one round trip (a script or a pipeline). `touch` refreshes the expiry and
returns `gen`; `check` does that (or reads `gen`) for many sessions at once: a worker checks
its cached sessions with it once a period, so a request on a session checked a moment ago
costs no round trip. Every method
raises StateUnavailable when Redis fails (redis_client.py), never redis-py's errors.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from mcpkit.protocol.snapshot import (
    LogLevelSet,
    SessionChange,
    SessionSnapshot,
    Subscribed,
    Unsubscribed,
)
from mcpkit.stores.redis_client import Unavailable

JSONObject = dict[str, Any]
_UNAVAILABLE = Unavailable("the session store")

# KEYS: the session, the expiry index. ARGV: id, now (ms), ttl (ms, 0: none), cap (-1: none),
# owner. 1 when reserved, 0 past the cap.
_RESERVE = """
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[2])
local cap = tonumber(ARGV[4])
if cap >= 0 and redis.call('ZCARD', KEYS[2]) >= cap then return 0 end
redis.call('HSET', KEYS[1], 'owner', ARGV[5], 'gen', 0)
local ttl = tonumber(ARGV[3])
if ttl > 0 then
  redis.call('PEXPIRE', KEYS[1], ttl)
  redis.call('ZADD', KEYS[2], tonumber(ARGV[2]) + ttl, ARGV[1])
else
  redis.call('ZADD', KEYS[2], '+inf', ARGV[1])
end
return 1
"""

# KEYS: the session, the expiry index. ARGV: id, now (ms), ttl (ms, 0: none), the owner
# required ('*': any; a session of another owner is left untouched), then 1 to return the
# whole record. The record (or just `gen`) after its expiry moved on; nil when there is none.
_TOUCH = """
local owner = redis.call('HGET', KEYS[1], 'owner')
if not owner or (ARGV[4] ~= '*' and owner ~= ARGV[4]) then return false end
local ttl = tonumber(ARGV[3])
if ttl > 0 then
  redis.call('PEXPIRE', KEYS[1], ttl)
  redis.call('ZADD', KEYS[2], 'XX', tonumber(ARGV[2]) + ttl, ARGV[1])
end
if ARGV[5] == '1' then return redis.call('HGETALL', KEYS[1]) end
return redis.call('HGET', KEYS[1], 'gen')
"""

# KEYS: the session. ARGV: n, then n field/value pairs to set, then fields to delete. The new
# `gen`; nil when the session is gone (nothing is written: a write never revives one).
_UPDATE = """
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
local n = tonumber(ARGV[1])
for i = 0, n - 1 do
  redis.call('HSET', KEYS[1], ARGV[2 + 2 * i], ARGV[3 + 2 * i])
end
for i = 2 + 2 * n, #ARGV do
  redis.call('HDEL', KEYS[1], ARGV[i])
end
return redis.call('HINCRBY', KEYS[1], 'gen', 1)
"""


# KEYS: the subscribers of a URI. ARGV: the prefix of the session keys. The members whose
# session still exists (the others leave the set).
_SUBSCRIBERS = """
local alive = {}
for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  if redis.call('EXISTS', ARGV[1] .. id) == 1 then
    table.insert(alive, id)
  else
    redis.call('SREM', KEYS[1], id)
  end
end
return alive
"""


@dataclass(frozen=True, slots=True)
class StoredSession:
    """A session as Redis holds it: its owner, its `gen`, and what it agreed (None while its
    `initialize` is being answered)."""

    owner: str
    gen: int
    snapshot: SessionSnapshot | None


def owner_key(principal_key: str | None) -> str:
    """How a session's owner is stored ("" for a session opened without authorization)."""
    return "" if principal_key is None else "p:" + principal_key


def session_key(prefix: str, session_id: str) -> str:
    """Where the session `session_id` of the service under `prefix` is kept (the hash above);
    also read by what lives as long as a session (gateway/resume.py)."""
    return f"{prefix}session:{session_id}"


class RedisSessionStore:
    """Session records in Redis (see the module docstring). `client`: a `redis.asyncio.Redis`;
    `ttl`: the idle timeout in seconds (None: sessions never expire); `max_sessions`: the cap
    over every worker (None: none); `clock`: epoch seconds, for the cap's expiry index.

    Its methods raise StateUnavailable when Redis fails (unreachable, refused, timed out).
    """

    def __init__(
        self,
        client: Any,
        *,
        prefix: str = "mcpkit:http:",
        ttl: float | None = 1800.0,
        max_sessions: int | None = 10_000,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._redis = client
        self._prefix = prefix
        self._index = prefix + "sessions"
        self._ttl_ms = 0 if ttl is None else max(1, round(ttl * 1000))
        self._cap = -1 if max_sessions is None else max_sessions
        self._clock = clock
        self._reserve = client.register_script(_RESERVE)
        self._touch = client.register_script(_TOUCH)
        self._update = client.register_script(_UPDATE)
        self._subscribers = client.register_script(_SUBSCRIBERS)

    def key(self, session_id: str) -> str:
        return session_key(self._prefix, session_id)

    def _now_ms(self) -> int:
        return round(self._clock() * 1000)

    async def reserve(self, session_id: str, owner: str) -> bool:
        """Keep a new session's id for `owner`; False past the cap."""
        args = [session_id, self._now_ms(), self._ttl_ms, self._cap, owner]
        with _UNAVAILABLE:
            return bool(await self._reserve(keys=[self.key(session_id), self._index], args=args))

    async def touch(self, session_id: str) -> int | None:
        """The session was used: its idle time starts again. Its `gen`, or None when it is gone
        (deleted, expired)."""
        args = [session_id, self._now_ms(), self._ttl_ms, "*", "0"]
        with _UNAVAILABLE:
            gen = await self._touch(keys=[self.key(session_id), self._index], args=args)
        return None if gen is None else int(gen)

    async def load(self, session_id: str, owner: str) -> StoredSession | None:
        """The session if `owner` opened it (touched, like `touch`), else None."""
        args = [session_id, self._now_ms(), self._ttl_ms, owner, "1"]
        with _UNAVAILABLE:
            flat = await self._touch(keys=[self.key(session_id), self._index], args=args)
        if not flat:
            return None
        return _stored({_text(flat[i]): flat[i + 1] for i in range(0, len(flat), 2)})

    async def save(self, session_id: str, snapshot: SessionSnapshot) -> int | None:
        """What `initialize` agreed; the new `gen`, None when the session is gone."""
        pairs = {
            "version": snapshot.version,
            "capabilities": orjson.dumps(snapshot.capabilities),
            "info": orjson.dumps(snapshot.info),
        }
        return await self.update(session_id, pairs, ())

    async def update(
        self,
        session_id: str,
        pairs: dict[str, Any],
        removed: Iterable[str],
        subscription: tuple[str, bool] | None = None,
    ) -> int | None:
        """Set `pairs` and delete `removed` fields; the new `gen`, None when it is gone.
        `subscription`: (a URI, whether the session is now subscribed to it), kept in the
        URI's subscribers in the same round trip."""
        args: list[Any] = [len(pairs)]
        for name, value in pairs.items():
            args += [name, value]
        args += list(removed)
        with _UNAVAILABLE:
            if subscription is None:
                gen = await self._update(keys=[self.key(session_id)], args=args)
            else:
                async with self._redis.pipeline(transaction=False) as pipe:
                    await self._update(keys=[self.key(session_id)], args=args, client=pipe)
                    uri, subscribed = subscription
                    key = self.subscribers_key(uri)
                    (pipe.sadd if subscribed else pipe.srem)(key, session_id)
                    gen = (await pipe.execute())[0]
        return None if gen is None else int(gen)

    async def change(self, session_id: str, change: SessionChange) -> int | None:
        """Make `change` to the record (each type its fields: `level`, `sub:{uri}`, the
        URI's subscribers; the handshake's end only moves `gen`); the new `gen`, None when
        the session is gone."""
        if isinstance(change, LogLevelSet):
            return await self.update(session_id, {"level": change.level}, ())
        if isinstance(change, Subscribed):
            field = subscription_field(change.uri)
            return await self.update(session_id, {field: 1}, (), (change.uri, True))
        if isinstance(change, Unsubscribed):
            field = subscription_field(change.uri)
            return await self.update(session_id, {}, (field,), (change.uri, False))
        return await self.update(session_id, {}, ())

    def subscribers_key(self, uri: str) -> str:
        return f"{self._prefix}subscribers:{uri}"

    async def subscribers(self, uri: str) -> list[str]:
        """The ids of the sessions subscribed to `uri` (one round trip)."""
        keys, args = [self.subscribers_key(uri)], [session_key(self._prefix, "")]
        with _UNAVAILABLE:
            found = await self._subscribers(keys=keys, args=args)
        return [_text(member) for member in found]

    async def delete(self, session_id: str) -> None:
        with _UNAVAILABLE:
            async with self._redis.pipeline(transaction=True) as pipe:  # one round trip
                pipe.delete(self.key(session_id))
                pipe.zrem(self._index, session_id)
                await pipe.execute()

    async def check(self, session_ids: Sequence[str], refresh: Sequence[str]) -> dict[str, int]:
        """The `gen` of each of `session_ids` that still exists, refreshing the expiry of
        those in `refresh` (used on this worker since the last check, or busy: a request or
        stream is open). One round trip."""
        if not session_ids:
            return {}
        now, refreshed = self._now_ms(), set(refresh)
        with _UNAVAILABLE:
            async with self._redis.pipeline(transaction=False) as pipe:
                for session_id in session_ids:
                    if session_id in refreshed:
                        args = [session_id, now, self._ttl_ms, "*", "0"]
                        keys = [self.key(session_id), self._index]
                        await self._touch(keys=keys, args=args, client=pipe)  # queued
                    else:
                        pipe.hget(self.key(session_id), "gen")
                answers = await pipe.execute()
        return {
            session_id: int(answer)
            for session_id, answer in zip(session_ids, answers, strict=True)
            if answer is not None
        }


def subscription_field(uri: str) -> str:
    return "sub:" + uri


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _stored(fields: dict[str, Any]) -> StoredSession:
    owner = _text(fields.get("owner", b""))
    gen = int(fields.get("gen", 0))
    version = fields.get("version")
    if version is None:
        return StoredSession(owner, gen, None)
    level = fields.get("level")
    subscriptions = tuple(
        sorted(_text(name)[4:] for name in fields if _text(name).startswith("sub:"))
    )
    snapshot = SessionSnapshot(
        _text(version),
        orjson.loads(fields.get("capabilities", b"{}")),
        orjson.loads(fields.get("info", b"{}")),
        None if level is None else _text(level),
        subscriptions,
    )
    return StoredSession(owner, gen, snapshot)
