"""The gateway's upstream session records (`UpstreamSessions`), and their in-process store.

A proxy's workers share the upstream session of each downstream session (gateway/resume.py):
one store per upstream keeps, by downstream session id, that upstream session's record (bytes
sealed by the gateway: opaque here). A record lives as long as its downstream session and
`grace` s longer, so that it can still be read once that session expired; an expiry index
says when each downstream session expires, and `claim_expired` hands each record of an
expired session to one caller only, which ends the upstream session. The Redis store is
stores/redis_upstreams.py.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Collection
from typing import Protocol

# The seconds the downstream session `id` has left: None when it is gone, math.inf when it
# never expires.
Left = Callable[[str], float | None]


class UpstreamSessions(Protocol):
    """One upstream's session records by downstream session id. Every method raises
    StoreUnavailable when the store's backend fails."""

    async def get(self, session_id: str) -> bytes | None:
        """The record of `session_id`'s upstream session, or None."""
        ...

    async def record(self, session_id: str, sealed: bytes, ttl: float | None) -> bytes:
        """Keep `sealed` unless a record is kept already (the first wins); the record kept.
        `ttl`: the downstream session's idle timeout, just renewed (None: it never expires):
        the record lives that long and `grace` more, and the index says when it expires."""
        ...

    async def drop(self, session_id: str, sealed: bytes) -> bool:
        """Forget the record of `session_id` if it still is `sealed` (a record written by
        another meanwhile stays); whether it went."""
        ...

    async def take(self, session_id: str) -> bytes | None:
        """The record of `session_id`, forgotten with its index entry (the session ended)."""
        ...

    async def refresh(self, session_ids: Collection[str]) -> None:
        """The records of `session_ids` live as long as their downstream sessions now do
        (and `grace` more), and the index says until when. A session gone is left alone."""
        ...

    async def claim_expired(self, limit: int) -> list[tuple[str, bytes | None]]:
        """The index entries past due (at most `limit`, each session once), each with its
        record when this caller claimed it (its downstream session is gone; no other caller
        gets it), else None (the session still lives: scored again; or no record)."""
        ...


class MemoryUpstreamSessions:
    """Upstream session records in this process. `left` tells how long a downstream session
    has left (see `Left`); `grace`: seconds a record outlives its session; `clock`: epoch
    seconds (default `time.time`)."""

    def __init__(self, left: Left, *, grace: float, clock: Callable[[], float] = time.time) -> None:
        self._left = left
        self.grace = grace
        self._clock = clock
        self._records: dict[str, tuple[bytes, float]] = {}  # id -> (sealed, until)
        self._index: dict[str, float] = {}  # id -> when its downstream session expires

    def _live(self, session_id: str) -> bytes | None:
        kept = self._records.get(session_id)
        if kept is not None and kept[1] <= self._clock():
            del self._records[session_id]
            return None
        return None if kept is None else kept[0]

    def _follow(self, session_id: str, left: float) -> None:
        """The record lives `left` s (and `grace`) more, if there is one."""
        sealed = self._live(session_id)
        if sealed is not None:
            self._records[session_id] = (sealed, self._clock() + left + self.grace)

    async def get(self, session_id: str) -> bytes | None:
        return self._live(session_id)

    async def record(self, session_id: str, sealed: bytes, ttl: float | None) -> bytes:
        kept = self._live(session_id)
        if kept is None:
            kept = sealed
            self._records[session_id] = (sealed, math.inf)
        if ttl is not None:
            self._follow(session_id, ttl)
            self._index[session_id] = self._clock() + ttl
        return kept

    async def drop(self, session_id: str, sealed: bytes) -> bool:
        if self._live(session_id) != sealed:
            return False
        del self._records[session_id]
        return True

    async def take(self, session_id: str) -> bytes | None:
        sealed = self._live(session_id)
        self._records.pop(session_id, None)
        self._index.pop(session_id, None)
        return sealed

    async def refresh(self, session_ids: Collection[str]) -> None:
        for session_id in session_ids:
            left = self._left(session_id)
            if left is None or left == math.inf or self._live(session_id) is None:
                continue
            self._follow(session_id, left)
            self._index[session_id] = self._clock() + left

    async def claim_expired(self, limit: int) -> list[tuple[str, bytes | None]]:
        now = self._clock()
        due = sorted((at, i) for i, at in self._index.items() if at <= now)[:limit]
        return [(session_id, self._claim(session_id, now)) for _, session_id in due]

    def _claim(self, session_id: str, now: float) -> bytes | None:
        left = self._left(session_id)
        if left is not None and left != math.inf:  # still used: scored again
            self._index[session_id] = now + left
            self._follow(session_id, left)
            return None
        del self._index[session_id]
        if left is not None:  # a session that never expires: not for this index
            return None
        sealed = self._live(session_id)
        self._records.pop(session_id, None)
        return sealed
