"""`RedisTaskStore`: task records in Redis (`pip install 'mcpkit[redis]'`), shared by every
server process that points at the same Redis, and kept across their restarts.

Layout (every key under `prefix`):
- `task:{id}`: the record as JSON, expiring with the task's ttl (Redis purges it; `get` and
  `update` also treat a record past its expiry by the store's `clock` as gone, so a store
  agrees with its clock, not Redis's);
- `by-owner:{owner}`: a sorted set of the owner's task ids by creation time (tasks/list);
- `expiry` and `owner-of`: when each task expires and whose it is, so that expired ids are
  taken out of the owner sets (a few at each create) and `max_tasks` counts live tasks;
- `worker:{id}`: the heartbeat of a process running tasks (`Heartbeats`), expiring unless
  renewed; `answers:{id}`: answers to a task's questions received by another process, until
  the one running the task takes them at its next beat.

`update` writes through a script that refuses to overwrite a terminal record, so a handler
finishing in one process never undoes a cancel made in another. `create` is one round trip,
`get` one, `update` two, `beat` and `alive` one each.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Awaitable, Callable, Collection, Coroutine, Sequence
from typing import Any, Concatenate, ParamSpec, TypeVar

import orjson

from mcpkit._extras import optional_dependency
from mcpkit.stores.tasks import Beat, StoreFull, StoreUnavailable, TaskRecord

JSONObject = dict[str, Any]
_PURGE_BATCH = 100
_PURGE_EVERY = 1.0  # seconds between purges of the indexes (a create triggers one)
_NO_EXPIRY = float("inf")
# KEYS[1] the record; ARGV[1] its new JSON. The stored record as it stands after (nil: gone).
_SET_UNLESS_TERMINAL = """
local current = redis.call('GET', KEYS[1])
if not current then return false end
local status = cjson.decode(current)['status']
if status == 'completed' or status == 'failed' or status == 'cancelled' then
  return current
end
redis.call('SET', KEYS[1], ARGV[1], 'KEEPTTL')
return ARGV[1]
"""

_P = ParamSpec("_P")
_T = TypeVar("_T")


def _mapped(
    method: Callable[Concatenate[RedisTaskStore, _P], Awaitable[_T]],
) -> Callable[Concatenate[RedisTaskStore, _P], Coroutine[Any, Any, _T]]:
    """The store's boundary with redis: a `redis.exceptions.RedisError` from `method` leaves
    as StoreUnavailable, naming the failure's kind only (redis's text may quote the URL)."""

    @functools.wraps(method)
    async def mapped(store: RedisTaskStore, /, *args: _P.args, **kwargs: _P.kwargs) -> _T:
        from redis.exceptions import RedisError

        try:
            return await method(store, *args, **kwargs)
        except RedisError as exc:
            raise StoreUnavailable(f"the Redis task store failed: {type(exc).__name__}") from None

    return mapped


class RedisTaskStore:
    """Task records in Redis. `url` ("redis://127.0.0.1:6379/0") or a `redis.asyncio.Redis`
    `client`; `prefix` namespaces the keys (one per server, or shared by its replicas);
    `max_tasks` bounds the live records (StoreFull beyond it); `clock`: the current time in
    epoch seconds (default `time.time`), which stamps `updated_at` and decides expiry.

    Raises ImportError (naming the extra) when the `redis` package is not installed. Every
    method raises StoreUnavailable when Redis fails (unreachable, refused, timed out).
    """

    def __init__(
        self,
        url: str | None = None,
        *,
        client: Any = None,
        prefix: str = "mcpkit:tasks:",
        max_tasks: int = 100_000,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if client is None:
            with optional_dependency():
                import redis.asyncio
            client = redis.asyncio.Redis.from_url(url or "redis://127.0.0.1:6379/0")
            self._owns_client = True
        else:
            self._owns_client = False
        self._redis = client
        self._set_unless_terminal = client.register_script(_SET_UNLESS_TERMINAL)
        self._purged = float("-inf")  # when expired ids were last taken out of the indexes
        self._prefix = prefix
        self.max_tasks = max_tasks
        self._clock = clock

    def _key(self, task_id: str) -> str:
        return f"{self._prefix}task:{task_id}"

    def _owner_key(self, owner: str | None) -> str:
        return f"{self._prefix}by-owner:{owner or ''}"

    @_mapped
    async def create(self, record: TaskRecord) -> None:
        await self._create(record, purged=False)

    async def _create(self, record: TaskRecord, *, purged: bool) -> None:
        now = self._clock()
        if not purged and now - self._purged >= _PURGE_EVERY:
            self._purged, purged = now, True
            await self._purge()
        redis = self._redis
        expires = record.expires_at
        async with redis.pipeline(transaction=True) as pipe:  # one round trip
            pipe.zcard(f"{self._prefix}expiry")
            if expires is None:
                pipe.set(self._key(record.task_id), _dump(record))
            else:
                left_ms = max(1, round((expires - self._clock()) * 1000))
                pipe.set(self._key(record.task_id), _dump(record), px=left_ms)
            pipe.zadd(self._owner_key(record.owner), {record.task_id: record.created_at})
            pipe.zadd(f"{self._prefix}expiry", {record.task_id: expires or _NO_EXPIRY})
            pipe.hset(f"{self._prefix}owner-of", record.task_id, record.owner or "")
            held = (await pipe.execute())[0]
        if held >= self.max_tasks:  # counted before this one: take it back out
            await self._forget([record.task_id], [record.owner or ""])
            if not purged:  # expired ones may make room
                self._purged = now
                await self._purge()
                await self._create(record, purged=True)
                return
            raise StoreFull(f"the task store holds its limit of {self.max_tasks} tasks")

    @_mapped
    async def get(self, task_id: str) -> TaskRecord | None:
        return self._live(await self._redis.get(self._key(task_id)))

    @_mapped
    async def update(self, task_id: str, changes: JSONObject) -> TaskRecord | None:
        # Read, change, then write unless the stored record turned terminal meanwhile (a
        # script, so the check and the write are one step): two round trips. Between the two
        # only the process running the task changes a live record, so nothing is lost.
        key = self._key(task_id)
        record = self._live(await self._redis.get(key))
        if record is None or record.terminal:
            return record
        for name, value in changes.items():
            setattr(record, name, value)
        record.updated_at = self._clock()
        stored = await self._set_unless_terminal(keys=[key], args=[_dump(record)])
        return None if stored is None else _load(stored)

    def _live(self, raw: bytes | str | None) -> TaskRecord | None:
        """The stored record, None when there is none or its ttl has passed by `clock` (Redis
        drops the key on its own clock, a moment apart from ours)."""
        if raw is None:
            return None
        record = _load(raw)
        expires = record.expires_at
        return None if expires is not None and expires <= self._clock() else record

    @_mapped
    async def list(
        self, owner: str | None, cursor: str | None, limit: int
    ) -> tuple[list[TaskRecord], str | None]:
        redis = self._redis
        index = self._owner_key(owner)
        start = 0
        if cursor is not None:
            rank = await redis.zrank(index, cursor)
            if rank is None:
                raise ValueError("unknown or expired cursor")
            start = rank + 1
        ids = [_text(i) for i in await redis.zrange(index, start, start + limit)]
        more = len(ids) > limit
        ids = ids[:limit]
        raws = await redis.mget([self._key(i) for i in ids]) if ids else []
        page = [record for raw in raws if (record := self._live(raw)) is not None]
        return page, (ids[-1] if more and ids else None)

    @_mapped
    async def beat(
        self, worker: str, ttl: float, task_ids: Sequence[str], asking: Sequence[str] = ()
    ) -> Beat:
        async with self._redis.pipeline(transaction=True) as pipe:  # one round trip
            pipe.set(self._worker_key(worker), b"1", px=max(1, round(ttl * 1000)))
            if task_ids:
                pipe.mget([self._key(i) for i in task_ids])
            for task_id in asking:  # read and taken in one step: each answer once
                pipe.hgetall(self._answers_key(task_id))
                pipe.delete(self._answers_key(task_id))
            replies = await pipe.execute()
        raws = replies[1] if task_ids else []
        statuses = {
            task_id: record.status
            for task_id, raw in zip(task_ids, raws, strict=True)
            if (record := self._live(raw)) is not None
        }
        taken = replies[2 if task_ids else 1 :: 2]
        answers = {
            task_id: {_text(k): orjson.loads(v) for k, v in found.items()}
            for task_id, found in zip(asking, taken, strict=True)
            if found
        }
        return Beat(statuses, answers)

    @_mapped
    async def send_answers(self, task_id: str, responses: JSONObject, ttl: float) -> None:
        if not responses:
            return
        key = self._answers_key(task_id)
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.hset(key, mapping={k: orjson.dumps(v) for k, v in responses.items()})
            pipe.pexpire(key, max(1, round(ttl * 1000)))
            await pipe.execute()

    def _answers_key(self, task_id: str) -> str:
        return f"{self._prefix}answers:{task_id}"

    @_mapped
    async def alive(self, workers: Collection[str]) -> set[str]:
        named = list(workers)
        if not named:
            return set()
        beats = await self._redis.mget([self._worker_key(w) for w in named])
        return {worker for worker, beat in zip(named, beats, strict=True) if beat is not None}

    def _worker_key(self, worker: str) -> str:
        return f"{self._prefix}worker:{worker}"

    @_mapped
    async def delete(self, task_id: str) -> None:
        owner = await self._redis.hget(f"{self._prefix}owner-of", task_id)
        await self._forget([task_id], [owner])

    async def aclose(self) -> None:
        if self._owns_client:
            await self._redis.aclose()

    async def _purge(self) -> None:
        """Take a batch of expired ids out of the indexes (Redis has dropped the records)."""
        redis = self._redis
        expired = await redis.zrangebyscore(
            f"{self._prefix}expiry", "-inf", self._clock(), start=0, num=_PURGE_BATCH
        )
        if expired:
            ids = [_text(i) for i in expired]
            owners = await redis.hmget(f"{self._prefix}owner-of", ids)
            await self._forget(ids, owners)

    async def _forget(self, ids: Sequence[str], owners: Sequence[Any]) -> None:
        async with self._redis.pipeline(transaction=True) as pipe:
            for task_id, owner in zip(ids, owners, strict=True):
                pipe.delete(self._key(task_id))
                if owner is not None:
                    pipe.zrem(self._owner_key(_text(owner) or None), task_id)
            pipe.zrem(f"{self._prefix}expiry", *ids)
            pipe.hdel(f"{self._prefix}owner-of", *ids)
            await pipe.execute()


def _dump(record: TaskRecord) -> bytes:
    return orjson.dumps(record.to_dict())


def _load(raw: bytes | str) -> TaskRecord:
    return TaskRecord.from_dict(orjson.loads(raw))


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
