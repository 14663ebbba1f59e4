"""`RedisEventStore`: the SSE events of HTTP sessions in Redis, so that a client that lost a
stream resumes it (`Last-Event-ID`) on any worker (`pip install 'mcpkit[redis]'`).

One Redis stream per session, `events:{session id}` under `prefix`, capped at `max_events`
(XADD MAXLEN: the oldest go first, as in the in-memory store) and expiring `ttl` s after its
last event. Each entry holds the event's id (`i`) and data (`d`). Entries are in the order
they were written, which for one SSE stream is the order its worker sent them (one stream is
produced by one worker); a replay returns the entries after the one named, of the same
stream, exactly once.

`append` (called as an event is sent) must not wait: it buffers, and one task per store
writes what gathered in a single pipeline (one round trip per burst of events). `forget`
is buffered the same way, behind the appends before it. `replay_after` first waits for this
process's buffer to be written, so a resume never misses an event sent by this worker.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from mcpkit.protocol.http import event_stream

logger = logging.getLogger("mcpkit.stores")

_Op = tuple[str, bytes, bytes] | str  # (session id, event id, data): append; an id: forget


class RedisEventStore:
    """Events in Redis (see the module docstring). `client`: a `redis.asyncio.Redis`.

    `replay_after` raises what redis-py raises when Redis fails; a failed background write is
    logged (the events it carried cannot be resumed) and does not stop later writes.
    """

    def __init__(
        self,
        client: Any,
        *,
        prefix: str = "mcpkit:http:",
        max_events: int = 1000,
        ttl: float | None = 1800.0,
    ) -> None:
        self._redis = client
        self._prefix = prefix
        self.max_events = max_events
        self.ttl = ttl
        self._buffer: list[_Op] = []
        self._writer: asyncio.Task[None] | None = None

    def key(self, session_id: str) -> str:
        return f"{self._prefix}events:{session_id}"

    def append(self, session_id: str, event_id: str, data: bytes) -> None:
        self._buffer.append((session_id, event_id.encode(), data))
        self._wake()

    def forget(self, session_id: str) -> None:
        self._buffer.append(session_id)
        self._wake()

    async def replay_after(self, session_id: str, event_id: str) -> list[tuple[str, bytes]] | None:
        stream = event_stream(event_id)
        if stream is None:
            return None
        await self.flush()
        entries = await self._redis.xrange(self.key(session_id))
        wanted = event_id.encode()
        position = next((i for i, (_, f) in enumerate(entries) if f[b"i"] == wanted), None)
        if position is None:
            return None  # unknown, or dropped: the client cannot be told what it missed
        prefix = stream + "."
        replay = []
        for _, fields in entries[position + 1 :]:
            eid, data = fields[b"i"].decode(), fields[b"d"]
            if eid.startswith(prefix) and data:
                replay.append((eid, data))
        return replay

    async def flush(self) -> None:
        """Until what this process buffered is written."""
        while self._writer is not None:
            await asyncio.shield(self._writer)

    async def aclose(self) -> None:
        await self.flush()

    def _wake(self) -> None:
        if self._writer is None:
            self._writer = asyncio.get_running_loop().create_task(self._write())

    async def _write(self) -> None:
        try:
            while self._buffer:
                ops, self._buffer = self._buffer, []
                try:
                    await self._send(ops)
                except Exception as exc:  # a Redis failure: these events are lost, go on
                    logger.warning(
                        "could not store %d SSE events: %s", len(ops), type(exc).__name__
                    )
        finally:
            self._writer = None

    async def _send(self, ops: list[_Op]) -> None:
        async with self._redis.pipeline(transaction=False) as pipe:  # one round trip
            touched: set[str] = set()
            for op in ops:
                if isinstance(op, str):
                    pipe.delete(self.key(op))
                    touched.discard(op)
                    continue
                session_id, eid, data = op
                fields = {b"i": eid, b"d": data}
                pipe.xadd(self.key(session_id), fields, maxlen=self.max_events, approximate=False)
                touched.add(session_id)
            if self.ttl is not None:
                ttl_ms = max(1, round(self.ttl * 1000))
                for session_id in touched:
                    pipe.pexpire(self.key(session_id), ttl_ms)
            await pipe.execute()
