"""The per-session log of SSE events (resumability): `EventLog`, kept in this process
(`MemoryEventStore`) or in Redis for every worker (`RedisEventStore`, stores/redis_events.py).

Every event sent on an SSE stream is appended under an id that names its stream
(`mcpkit.protocol.http.event_id`); `replay_after` gives the events of that stream stored after
an id, exactly once and in order, None when the id is unknown or dropped (each session keeps at
most `max_events`, the oldest go first).

The GET stream (`0`) of a session served by several workers is sent by one worker, its home,
which appends what it sends. What another worker makes for that stream while no worker holds
it is stored too, marked *made* (`made`). A replay of the GET stream gives what was sent after
the event named, then each made message that no sent entry matches: none with its id (a made
message replayed is stored as sent then), none after it with its data within `SAME_MS` (the
home's copy of it: the worker that made it stores it before it tells the others).

`tail` follows a stream as it is written (a POST stream resumed while its request still runs
on another worker): the events stored after an id, then each batch stored next.
`append`, `made` and `forget` never wait; `flush` waits until what was appended is stored.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Protocol

from mcpkit.protocol.http import event_stream

__all__ = ["SAME_MS", "Entry", "EventLog", "EventTail", "MemoryEventStore", "replay"]

SAME_MS = 2000  # a made message and its home's sent copy are stored this close (ms)
# A stored event: (when, in ms; its event id; its data; made for a stream another worker sends)
Entry = tuple[int, str, bytes, bool]
Events = list[tuple[str, bytes]]


class EventTail(Protocol):
    """A stream followed from an event: `stored`, what was stored after it; then `next`."""

    stored: Events

    async def next(self, wait: float) -> Events:
        """The events stored next ([] when none came within `wait` s). Raises
        StoreUnavailable when the store fails."""
        ...


class EventLog(Protocol):
    """Where a session's SSE events wait for a client that may come back (see the module
    docstring). The methods that await raise StoreUnavailable when the store fails."""

    def append(self, session_id: str, event_id: str, data: bytes) -> None: ...

    def made(self, session_id: str, event_id: str, data: bytes) -> None: ...

    def forget(self, session_id: str) -> None: ...

    async def replay_after(self, session_id: str, event_id: str) -> Events | None: ...

    async def tail(self, session_id: str, event_id: str) -> EventTail | None:
        """Follow `event_id`'s stream from it; None when the event is unknown."""
        ...

    async def flush(self) -> None: ...


def replay(entries: Sequence[Entry], event_id: str) -> tuple[Events, Events] | None:
    """What a resume from `event_id` gives, from a session's `entries` (oldest first): the
    events of its stream sent after it, and the made ones no sent entry matches (the store
    then appends those as sent). None when `event_id` is unknown."""
    stream = event_stream(event_id)
    if stream is None:
        return None
    position = None
    for index, (_, eid, _, made) in enumerate(entries):
        if eid == event_id and not made:
            position = index  # the last: a made message replayed is stored as sent then
    if position is None:
        position = next((i for i, entry in enumerate(entries) if entry[1] == event_id), None)
    if position is None:
        return None  # unknown, or dropped: the client cannot be told what it missed
    prefix = stream + "."
    sent = [
        (eid, data)
        for _, eid, data, made in entries[position + 1 :]
        if eid.startswith(prefix) and data and not made
    ]
    unsent = [(e, d) for e, d in _unsent(entries) if e != event_id and e.startswith(prefix)]
    return sent, unsent


def _unsent(entries: Sequence[Entry]) -> Events:
    """The made messages (oldest first) that no sent entry matches (see the module docstring;
    each sent entry matches one made message)."""
    ids = {eid for _, eid, _, made in entries if not made}
    waiting: dict[bytes, deque[tuple[int, int]]] = {}  # data -> (ms, index), oldest first
    unmatched: list[int] = []
    matched: set[int] = set()
    for index, (at, eid, data, made) in enumerate(entries):
        if made:
            if eid not in ids:
                unmatched.append(index)
                waiting.setdefault(data, deque()).append((at, index))
            continue
        candidates = waiting.get(data)
        while candidates and candidates[0][0] < at - SAME_MS:
            candidates.popleft()  # too old for this sent entry, and for every later one
        if candidates:
            matched.add(candidates.popleft()[1])
    return [(entries[i][1], entries[i][2]) for i in unmatched if i not in matched]


class MemoryEventStore:
    """Events in this process: at most `max_events` per session, the oldest go first. `clock`
    (seconds) dates the entries for the matching of made messages."""

    def __init__(self, max_events: int = 1000, clock: Callable[[], float] = time.monotonic):
        self.max_events = max_events
        self._clock = clock
        self._sessions: dict[str, deque[tuple[int, Entry]]] = {}  # (sequence, entry)
        self._sequence = 0
        self._written: dict[str, asyncio.Event] = {}  # set when a followed session grows

    def append(self, session_id: str, event_id: str, data: bytes) -> None:
        self._store(session_id, event_id, data, False)

    def made(self, session_id: str, event_id: str, data: bytes) -> None:
        self._store(session_id, event_id, data, True)

    def _store(self, session_id: str, event_id: str, data: bytes, made: bool) -> None:
        events = self._sessions.get(session_id)
        if events is None:
            events = self._sessions[session_id] = deque(maxlen=self.max_events)
        self._sequence += 1
        events.append((self._sequence, (int(self._clock() * 1000), event_id, data, made)))
        written = self._written.pop(session_id, None)
        if written is not None:
            written.set()

    async def replay_after(self, session_id: str, event_id: str) -> Events | None:
        events = self._sessions.get(session_id)
        found = replay([entry for _, entry in events or ()], event_id)
        if found is None:
            return None
        sent, unsent = found
        for eid, data in unsent:  # sent now: a later resume does not replay them again
            self.append(session_id, eid, data)
        return sent + unsent

    async def tail(self, session_id: str, event_id: str) -> EventTail | None:
        events = self._sessions.get(session_id) or ()
        at = next((seq for seq, entry in events if entry[1] == event_id), None)
        return None if at is None else _MemoryTail(self, session_id, at)

    def after(self, session_id: str, sequence: int) -> list[tuple[int, Entry]]:
        """The entries of `session_id` stored after `sequence` (what `_MemoryTail` reads)."""
        return [item for item in self._sessions.get(session_id, ()) if item[0] > sequence]

    async def written(self, session_id: str, wait: float) -> None:
        """Until something is stored for `session_id`, or `wait` s pass."""
        event = self._written.setdefault(session_id, asyncio.Event())
        try:
            async with asyncio.timeout(wait):
                await event.wait()
        except TimeoutError:
            pass

    def forget(self, session_id: str) -> None:
        self._sessions.pop(session_id, None)
        self._written.pop(session_id, None)

    async def flush(self) -> None:
        return None

    def __len__(self) -> int:
        return sum(len(events) for events in self._sessions.values())


class _MemoryTail:
    def __init__(self, store: MemoryEventStore, session_id: str, at: int) -> None:
        self._store = store
        self._session_id = session_id
        self._at = at
        self.stored = self._read()

    def _read(self) -> Events:
        items = self._store.after(self._session_id, self._at)
        if items:
            self._at = items[-1][0]
        return [(entry[1], entry[2]) for _, entry in items]

    async def next(self, wait: float) -> Events:
        found = self._read()
        if found:
            return found
        await self._store.written(self._session_id, wait)
        return self._read()
