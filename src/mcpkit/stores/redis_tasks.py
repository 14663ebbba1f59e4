"""`RedisTaskStore`: task records in Redis (`pip install 'mcpkit[redis]'`), shared by every
server process that points at the same Redis, and kept across their restarts.

Layout (every key under `prefix`):
- `task:{id}`: the record as JSON, expiring with the task's ttl (Redis purges it);
- `by-owner:{owner}`: a sorted set of the owner's task ids by creation time (tasks/list);
- `expiry` and `owner-of`: when each task expires and whose it is, so that expired ids are
  taken out of the owner sets (a few at each create) and `max_tasks` counts live tasks.

`update` is a compare-and-set (WATCH / MULTI): a terminal record is never overwritten, even by
a process that races another.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import orjson

from mcpkit.stores.tasks import StoreFull, TaskRecord

JSONObject = dict[str, Any]
_PURGE_BATCH = 100
_NO_EXPIRY = float("inf")


class RedisTaskStore:
    """Task records in Redis. `url` ("redis://127.0.0.1:6379/0") or a `redis.asyncio.Redis`
    `client`; `prefix` namespaces the keys (one per server, or shared by its replicas);
    `max_tasks` bounds the live records (StoreFull beyond it).

    Raises ImportError (naming the extra) when the `redis` package is not installed.
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
            try:
                import redis.asyncio
            except ImportError as exc:  # pragma: no cover - depends on the install
                raise ImportError(
                    "RedisTaskStore needs the redis package: pip install 'mcpkit[redis]'"
                ) from exc
            client = redis.asyncio.Redis.from_url(url or "redis://127.0.0.1:6379/0")
            self._owns_client = True
        else:
            self._owns_client = False
        self._redis = client
        self._prefix = prefix
        self.max_tasks = max_tasks
        self._clock = clock

    def _key(self, task_id: str) -> str:
        return f"{self._prefix}task:{task_id}"

    def _owner_key(self, owner: str | None) -> str:
        return f"{self._prefix}by-owner:{owner or ''}"

    async def create(self, record: TaskRecord) -> None:
        await self._purge()
        redis = self._redis
        if await redis.zcard(f"{self._prefix}expiry") >= self.max_tasks:
            raise StoreFull(f"the task store holds its limit of {self.max_tasks} tasks")
        expires = record.expires_at
        async with redis.pipeline(transaction=True) as pipe:
            if expires is None:
                pipe.set(self._key(record.task_id), _dump(record))
            else:
                left_ms = max(1, round((expires - self._clock()) * 1000))
                pipe.set(self._key(record.task_id), _dump(record), px=left_ms)
            pipe.zadd(self._owner_key(record.owner), {record.task_id: record.created_at})
            pipe.zadd(f"{self._prefix}expiry", {record.task_id: expires or _NO_EXPIRY})
            pipe.hset(f"{self._prefix}owner-of", record.task_id, record.owner or "")
            await pipe.execute()

    async def get(self, task_id: str) -> TaskRecord | None:
        raw = await self._redis.get(self._key(task_id))
        return None if raw is None else _load(raw)

    async def update(self, task_id: str, changes: JSONObject) -> TaskRecord | None:
        from redis.exceptions import WatchError

        key = self._key(task_id)
        async with self._redis.pipeline(transaction=True) as pipe:
            while True:
                try:
                    await pipe.watch(key)
                    raw = await pipe.get(key)
                    if raw is None:
                        return None
                    record = _load(raw)
                    if record.terminal:
                        return record
                    for name, value in changes.items():
                        setattr(record, name, value)
                    record.updated_at = self._clock()
                    pipe.multi()
                    pipe.set(key, _dump(record), keepttl=True)
                    await pipe.execute()
                    return record
                except WatchError:
                    continue  # someone else changed it meanwhile: read it again

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
        page = [_load(raw) for raw in raws if raw is not None]
        return page, (ids[-1] if more and ids else None)

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
