"""A lease: a named right held by one owner for a while (`Leases`), and its in-process store.

Whoever takes a lease names itself with an owner token (a random string, one per attempt)
and gives a ttl: the lease is its own until it releases it or the ttl passes, and then
anyone's. `renew` and `release` act only while the lease is still the caller's: a holder
slower than its ttl, whose lease another took meanwhile, neither extends nor ends the new
holder's. The Redis store is stores/redis_lease.py.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol


class Leases(Protocol):
    """Leases by key, shared by whatever shares the store. Every method raises
    StoreUnavailable when the store's backend fails."""

    async def acquire(self, key: str, owner: str, ttl: float) -> bool:
        """Take `key` for `owner` for `ttl` s; False when another holds it."""
        ...

    async def renew(self, key: str, owner: str, ttl: float) -> bool:
        """`ttl` s more from now, if `key` is still `owner`'s (else False, nothing changed)."""
        ...

    async def release(self, key: str, owner: str) -> bool:
        """Give `key` up, if it is still `owner`'s (else False, nothing changed)."""
        ...


def check_ttl(ttl: float) -> None:
    if not ttl > 0:
        raise ValueError(f"a lease's ttl must be a positive number of seconds, not {ttl!r}")


class MemoryLease:
    """Leases in this process (several workers of one process, tests). `clock`: seconds,
    intervals only (default `time.monotonic`)."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._held: dict[str, tuple[str, float]] = {}  # key -> (owner, until)

    def _holder(self, key: str) -> str | None:
        held = self._held.get(key)
        if held is None:
            return None
        if held[1] <= self._clock():
            del self._held[key]
            return None
        return held[0]

    async def acquire(self, key: str, owner: str, ttl: float) -> bool:
        check_ttl(ttl)
        if self._holder(key) is not None:
            return False
        self._held[key] = (owner, self._clock() + ttl)
        return True

    async def renew(self, key: str, owner: str, ttl: float) -> bool:
        check_ttl(ttl)
        if self._holder(key) != owner:
            return False
        self._held[key] = (owner, self._clock() + ttl)
        return True

    async def release(self, key: str, owner: str) -> bool:
        if self._holder(key) != owner:
            return False
        del self._held[key]
        return True
