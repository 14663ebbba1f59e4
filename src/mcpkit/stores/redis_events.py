"""`RedisEventStore`: the SSE events of HTTP sessions in Redis, so that a client that lost a
stream resumes it (`Last-Event-ID`) on any worker (`pip install 'mcpkit[redis]'`).

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
that no sent entry matches: none with its id (a made message replayed is stored as sent
then), none after it with its data within `SAME_MS` (the home's copy of it, each sent entry
matching one made message: the worker that made it stores it before it tells the others).

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
from collections import deque
from typing import Any

from mcpkit.protocol.http import event_stream
from mcpkit.stores.redis_client import Unavailable, is_failure

logger = logging.getLogger("mcpkit.stores")

# (session id, event id, data, made here for a stream another worker sends); an id: forget
_Op = tuple[str, bytes, bytes, bool] | str
_UNAVAILABLE = Unavailable("the event store")
SAME_MS = 2000  # a made message and its home's sent copy are stored this close (ms)


class RedisEventStore:
    """Events in Redis (see the module docstring). `client`: a `redis.asyncio.Redis`.

    `replay_after` and `entries` raise StateUnavailable when Redis fails; a failed background
    write is logged (the events it carried cannot be resumed) and does not stop later writes.
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

    async def replay_after(self, session_id: str, event_id: str) -> list[tuple[str, bytes]] | None:
        stream = event_stream(event_id)
        if stream is None:
            return None
        await self.flush()
        entries = await self.entries(session_id)
        wanted = event_id.encode()
        position = None
        for index, (_, fields) in enumerate(entries):
            if fields[b"i"] == wanted and b"m" not in fields:
                position = index  # the last: a made message replayed is stored as sent then
        if position is None:
            position = next((i for i, (_, f) in enumerate(entries) if f[b"i"] == wanted), None)
        if position is None:
            return None  # unknown, or dropped: the client cannot be told what it missed
        prefix = stream + "."
        replay = []
        for _, fields in entries[position + 1 :]:
            eid, data = fields[b"i"].decode(), fields[b"d"]
            if eid.startswith(prefix) and data and b"m" not in fields:
                replay.append((eid, data))
        unsent = [(e, d) for e, d in _unsent(entries) if e != event_id and e.startswith(prefix)]
        for eid, data in unsent:  # sent now: a later resume does not replay them again
            self.append(session_id, eid, data)
        return replay + unsent

    async def entries(self, session_id: str) -> list[tuple[Any, dict[bytes, bytes]]]:
        """The session's stored entries, oldest first: (entry id, {b"i": event id, b"d":
        data}). Raises StateUnavailable when Redis fails."""
        with _UNAVAILABLE:
            entries: list[tuple[Any, dict[bytes, bytes]]] = await self._redis.xrange(
                self.key(session_id)
            )
        return entries

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


def _unsent(entries: list[tuple[Any, dict[bytes, bytes]]]) -> list[tuple[str, bytes]]:
    """The made messages (oldest first) that no sent entry matches: none with their id, none
    after them with their data within `SAME_MS` (each sent entry matches one made message;
    the worker that made one stored it before it told the others)."""
    ids = {f[b"i"] for _, f in entries if b"m" not in f}
    waiting: dict[bytes, deque[tuple[int, int]]] = {}  # data -> (ms, index), oldest first
    made: list[int] = []
    matched: set[int] = set()
    for index, (entry_id, fields) in enumerate(entries):
        at, data = _ms(entry_id), fields[b"d"]
        if b"m" in fields:
            if fields[b"i"] not in ids:
                made.append(index)
                waiting.setdefault(data, deque()).append((at, index))
            continue
        candidates = waiting.get(data)
        while candidates and candidates[0][0] < at - SAME_MS:
            candidates.popleft()  # too old for this sent entry, and for every later one
        if candidates:
            matched.add(candidates.popleft()[1])
    return [(entries[i][1][b"i"].decode(), entries[i][1][b"d"]) for i in made if i not in matched]


def _ms(entry_id: Any) -> int:
    """When Redis stored an entry (its stream id is "milliseconds-sequence")."""
    text = entry_id.decode() if isinstance(entry_id, bytes) else str(entry_id)
    return int(text.split("-", 1)[0])
