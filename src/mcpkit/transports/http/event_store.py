"""Where SSE events wait for a client that may come back (resumability).

Every event sent on an SSE stream is appended here under an id that names its stream
(`mcpkit.protocol.http.event_id`). A client that lost a stream sends GET with
`Last-Event-ID`; the app replays what followed that event on the same stream, and nothing
from other streams. `append` must not block (a networked store buffers and flushes in the
background); `replay_after` may await. `MemoryEventStore` (the default, stores/events.py) is the
in-process twin of the Redis one.
"""

from __future__ import annotations

from typing import Protocol

from mcpkit.stores.events import MemoryEventStore

__all__ = ["EventStore", "MemoryEventStore"]


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
