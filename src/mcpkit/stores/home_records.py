"""Which worker is home to what (`HomeRecordStore`), and the in-process store of those records.

Some of a proxy's state lives in one worker only (gateway/home.py): that worker records
itself as its home under a key, for a while, and another worker that has none for the key
reads there where to send the request. A record is bytes (the gateway's JSON: opaque here)
that expire after their ttl. The Redis store is stores/redis_home_records.py.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Protocol


class HomeRecordStore(Protocol):
    """Records by key, each for a while. Both methods raise StoreUnavailable when the
    store's backend fails."""

    async def write(self, key: str, record: bytes, ttl: float) -> None:
        """Keep `record` under `key` for `ttl` s (at least a second on Redis)."""
        ...

    async def read(self, keys: Sequence[str]) -> list[bytes | None]:
        """The records of `keys`, in order (None: none, or expired)."""
        ...


class MemoryHomeRecords:
    """Home records in this process. `clock`: seconds, intervals only."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._records: dict[str, tuple[bytes, float]] = {}  # key -> (record, until)

    async def write(self, key: str, record: bytes, ttl: float) -> None:
        self._records[key] = (record, self._clock() + ttl)

    async def read(self, keys: Sequence[str]) -> list[bytes | None]:
        now = self._clock()
        found: list[bytes | None] = []
        for key in keys:
            kept = self._records.get(key)
            if kept is not None and kept[1] <= now:
                del self._records[key]
                kept = None
            found.append(None if kept is None else kept[0])
        return found
