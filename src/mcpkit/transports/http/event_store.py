"""Where SSE events wait for a client that may come back (resumability).

Every event sent on an SSE stream is appended here under an id that names its stream
(`mcpkit.protocol.http.event_id`). A client that lost a stream sends GET with
`Last-Event-ID`; the app replays what followed that event on the same stream, and nothing
from other streams. `append` must not block (a networked store buffers and flushes in the
background); `replay_after` may await.
"""

from __future__ import annotations

from collections import deque
from typing import Protocol

from mcpkit.protocol.http import event_sequence, event_stream


class EventStore(Protocol):
    def append(self, session_id: str, event_id: str, data: bytes) -> None:
        """Keep one event (empty `data`: a priming event, replayed as nothing)."""
        ...

    async def replay_after(self, session_id: str, event_id: str) -> list[tuple[str, bytes]] | None:
        """The events of `event_id`'s stream that came after it; None if it is unknown."""
        ...

    def forget(self, session_id: str) -> None:
        """Drop everything of a session (it was deleted or expired)."""
        ...


class MemoryEventStore:
    """Bounded: at most `max_events` per session; the oldest go first."""

    def __init__(self, max_events: int = 1000) -> None:
        self.max_events = max_events
        self._sessions: dict[str, deque[tuple[str, bytes]]] = {}

    def append(self, session_id: str, event_id: str, data: bytes) -> None:
        events = self._sessions.get(session_id)
        if events is None:
            events = self._sessions[session_id] = deque(maxlen=self.max_events)
        events.append((event_id, data))

    async def replay_after(self, session_id: str, event_id: str) -> list[tuple[str, bytes]] | None:
        stream = event_stream(event_id)
        events = self._sessions.get(session_id)
        if stream is None or not events:
            return None
        after = event_sequence(event_id)
        if event_sequence(events[0][0]) > after:
            return None  # it has been dropped: the client cannot be told what it missed
        prefix = stream + "."
        return [
            (eid, data)
            for eid, data in events
            if eid.startswith(prefix) and event_sequence(eid) > after and data
        ]

    def forget(self, session_id: str) -> None:
        self._sessions.pop(session_id, None)

    def __len__(self) -> int:
        return sum(len(events) for events in self._sessions.values())
