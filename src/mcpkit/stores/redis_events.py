"""`RedisEventStore`: the SSE events of HTTP sessions in Redis, so that a client that lost a
stream resumes it (`Last-Event-ID`) on any worker (`pip install 'mcpkit[redis]'`). It is the
`EventLog` of stores/events.py, whose in-process twin is `MemoryEventStore`; what a replay
gives is decided there (`replay`), for both.

One Redis stream per session, `events:{session id}` under `prefix`, capped at `max_events`
(XADD MAXLEN: the oldest go first, as in the in-memory store) and expiring `ttl` s after its
last event. Each entry holds the event's id (`i`) and data (`d`). Entries are in the order
they were written, which for one SSE stream is the order its worker sent them (one stream is
produced by one worker); a replay returns the entries after the one named, of the same
stream, exactly once.

The GET stream (`0`) of a session served by several workers is sent by one worker, its
*home*, which stores what it sends (`append`). So that what another worker makes for that
stream while no worker holds it (its home stopped or was killed) still reaches the client, the
worker that makes such a message stores it too, marked *made* (`made`: an entry with `m`). A
replay of the GET stream gives what was sent after the event named, then each made message
that no sent entry matches (stores/events.py). An entry is dated by its Redis stream id.

`tail` follows a stream as it is stored (XREAD, each read blocking at most the wait given).

`append` (called as an event is sent) must not wait: it buffers, and one task per store
writes what gathered in a single pipeline (one round trip per burst of events). `forget`
is buffered the same way, behind the appends before it. `replay_after` first waits for what
this process buffered until then to be written, so a resume never misses an event sent by
this worker (and, Redis failing, waits for no more than that: at most two bursts).

When Redis fails, the stream being sent goes on (its events are not stored: a client that
loses it cannot resume past them), and the failure is logged once, when writes start failing
(its kind only: redis-py's text may quote the URL, which may hold a password), then once
when they succeed again, with how many events were not stored.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from mcpkit.protocol.http import event_stream
from mcpkit.stores.events import Entry, Events, replay
from mcpkit.stores.redis_client import Unavailable, is_failure

logger = logging.getLogger("mcpkit.stores")

# (session id, event id, data, made here for a stream another worker sends); an id: forget
_Op = tuple[str, bytes, bytes, bool] | str
_UNAVAILABLE = Unavailable("the event store")


class RedisEventStore:
    """Events in Redis (see the module docstring). `client`: a `redis.asyncio.Redis`.

    `replay_after`, `entries` and `tail` raise StateUnavailable when Redis fails; a failed
    background write is logged (the events it carried cannot be resumed) and does not stop
    later writes.
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
        self._buffered: asyncio.Future[None] | None = None  # done when `_buffer` is written
        self._writing: asyncio.Future[None] | None = None  # done when the burst sent is
        self._writer: asyncio.Task[None] | None = None
        self._lost: int | None = None  # events not stored since writes failed (None: they work)

    def key(self, session_id: str) -> str:
        return f"{self._prefix}events:{session_id}"

    def append(self, session_id: str, event_id: str, data: bytes) -> None:
        self._buffer.append((session_id, event_id.encode(), data, False))
        self._wake()

    def made(self, session_id: str, event_id: str, data: bytes) -> None:
        """Store a message for the GET stream that this worker made and another sends (see
        the module docstring)."""
        self._buffer.append((session_id, event_id.encode(), data, True))
        self._wake()

    def forget(self, session_id: str) -> None:
        self._buffer.append(session_id)
        self._wake()

    async def replay_after(self, session_id: str, event_id: str) -> Events | None:
        if event_stream(event_id) is None:
            return None  # not one of our ids: no round trip
        await self.flush()
        found = replay(await self.entries(session_id), event_id)
        if found is None:
            return None
        sent, unsent = found
        for eid, data in unsent:  # sent now: a later resume does not replay them again
            self.append(session_id, eid, data)
        return sent + unsent

    async def entries(self, session_id: str) -> list[Entry]:
        """The session's stored entries, oldest first. Raises StateUnavailable when Redis
        fails."""
        with _UNAVAILABLE:
            found = await self._redis.xrange(self.key(session_id))
        return [_entry(entry_id, fields) for entry_id, fields in found]

    async def tail(self, session_id: str, event_id: str) -> _RedisTail | None:
        """Follow `event_id`'s stream from it (stores/events.py `EventTail`); None when the
        event is unknown. Raises StateUnavailable when Redis fails."""
        await self.flush()
        key = self.key(session_id)
        with _UNAVAILABLE:
            found = await self._redis.xrange(key)
        wanted = event_id.encode()
        position = next((i for i, (_, f) in enumerate(found) if f[b"i"] == wanted), None)
        if position is None:
            return None
        stored = [(f[b"i"].decode(), f[b"d"]) for _, f in found[position + 1 :]]
        return _RedisTail(self._redis, key, found[-1][0], stored)

    async def flush(self) -> None:
        """Until what this process buffered so far is written (or failed to be): the burst
        being sent, then the one gathering. Later events are not waited for."""
        waits = [w for w in (self._writing, self._buffered) if w is not None]
        for wait in waits:
            await asyncio.shield(wait)

    async def aclose(self) -> None:
        await self.flush()

    def _wake(self) -> None:
        loop = asyncio.get_running_loop()
        if self._buffered is None:
            self._buffered = loop.create_future()
        if self._writer is None:
            self._writer = loop.create_task(self._write())

    async def _write(self) -> None:
        try:
            while self._buffer:
                ops, self._buffer = self._buffer, []
                self._writing, self._buffered = self._buffered, None
                try:
                    await self._send(ops)
                    self._stored_again()
                except Exception as exc:  # a Redis failure: these events are lost, go on
                    if not is_failure(exc):
                        logger.exception("could not store %d SSE events", len(ops))
                    else:
                        self._not_stored(ops, exc)
                finally:
                    if self._writing is not None:
                        self._writing.set_result(None)
                    self._writing = None
        finally:
            self._writer = None
            if self._buffered is not None:  # cancelled: no waiter waits for ever (the next
                self._buffered.set_result(None)  # append starts a writer for what is left)
                self._buffered = None

    def _not_stored(self, ops: list[_Op], exc: BaseException) -> None:
        """A burst failed: log it if it is the first since writes last succeeded."""
        if self._lost is None:
            self._lost = 0
            logger.warning(
                "Redis failed (%s): SSE events are not being stored, so a client that "
                "loses its stream cannot resume past them; streams go on",
                type(exc).__name__,
            )
        self._lost += sum(1 for op in ops if not isinstance(op, str))

    def _stored_again(self) -> None:
        if self._lost is not None:
            logger.warning("Redis is back: SSE events are stored again (%d were not)", self._lost)
            self._lost = None

    async def _send(self, ops: list[_Op]) -> None:
        async with self._redis.pipeline(transaction=False) as pipe:  # one round trip
            touched: set[str] = set()
            for op in ops:
                if isinstance(op, str):
                    pipe.delete(self.key(op))
                    touched.discard(op)
                    continue
                session_id, eid, data, made = op
                touched.add(session_id)
                fields = {b"i": eid, b"d": data}
                if made:
                    fields[b"m"] = b"1"
                pipe.xadd(self.key(session_id), fields, maxlen=self.max_events, approximate=False)
            if self.ttl is not None:
                ttl_ms = max(1, round(self.ttl * 1000))
                for session_id in touched:
                    pipe.pexpire(self.key(session_id), ttl_ms)
            await pipe.execute()


class _RedisTail:
    """A stream followed in Redis from the entry `cursor` (stores/events.py `EventTail`)."""

    def __init__(self, client: Any, key: str, cursor: Any, stored: Events) -> None:
        self._redis = client
        self._key = key
        self._cursor = cursor
        self.stored = stored

    async def next(self, wait: float) -> Events:
        with _UNAVAILABLE:
            found = await self._redis.xread({self._key: self._cursor}, block=int(wait * 1000))
        if not found:
            return []
        entries = found[0][1]
        self._cursor = entries[-1][0]
        return [(f[b"i"].decode(), f[b"d"]) for _, f in entries]


def _entry(entry_id: Any, fields: dict[bytes, bytes]) -> Entry:
    return (_ms(entry_id), fields[b"i"].decode(), fields[b"d"], b"m" in fields)


def _ms(entry_id: Any) -> int:
    """When Redis stored an entry (its stream id is "milliseconds-sequence")."""
    text = entry_id.decode() if isinstance(entry_id, bytes) else str(entry_id)
    return int(text.split("-", 1)[0])
