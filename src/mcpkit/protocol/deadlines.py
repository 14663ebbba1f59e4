"""Timeouts for outbound requests, with time passed in (the core never reads a clock).

A request may have a timeout (reset by progress when asked) and a hard maximum that progress
never extends. Deadlines sit in a heap with lazy deletion: an entry whose request is gone or
whose deadline moved is skipped when it surfaces.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

from mcpkit.protocol.jsonrpc import RequestId


@dataclass(slots=True)
class Timeout:
    """How long an outbound request may wait. All in seconds; None means no limit."""

    timeout: float | None = None
    reset_on_progress: bool = False
    maximum: float | None = None

    def __post_init__(self) -> None:
        for value in (self.timeout, self.maximum):
            if value is not None and value <= 0:
                raise ValueError("timeouts must be positive")


class Deadline:
    __slots__ = ("at", "hard_at", "limit")

    def __init__(self, limit: Timeout, now: float) -> None:
        self.limit = limit
        self.hard_at = None if limit.maximum is None else now + limit.maximum
        soft_at = None if limit.timeout is None else now + limit.timeout
        self.at = _earliest(soft_at, self.hard_at)

    def on_progress(self, now: float) -> bool:
        """Push the deadline out after progress; True when it moved."""
        if not self.limit.reset_on_progress or self.limit.timeout is None:
            return False
        at = _earliest(now + self.limit.timeout, self.hard_at)
        if at == self.at:
            # Unmoved (same clock reading, or held at the hard maximum): a second heap entry
            # with the same time would make expire() report this request twice.
            return False
        self.at = at
        return True

    def effective_timeout(self) -> float:
        # For messages: the limit that actually fired.
        if self.limit.timeout is None:
            return self.limit.maximum or 0.0
        if self.limit.maximum is None:
            return self.limit.timeout
        return min(self.limit.timeout, self.limit.maximum)


def _earliest(a: float | None, b: float | None) -> float | None:
    if a is None:
        return b
    if b is None:
        return a
    return min(a, b)


class DeadlineQueue:
    """Which request times out next."""

    __slots__ = ("_heap",)

    def __init__(self) -> None:
        self._heap: list[tuple[float, RequestId]] = []

    def push(self, at: float, request_id: RequestId) -> None:
        # Our own request ids are integers, so ties on `at` compare cleanly.
        heapq.heappush(self._heap, (at, request_id))

    def next_at(self, live: dict[RequestId, Deadline]) -> float | None:
        heap = self._heap
        while heap:
            at, request_id = heap[0]
            deadline = live.get(request_id)
            if deadline is not None and deadline.at == at:
                return at
            heapq.heappop(heap)
        return None

    def pop_expired(self, now: float, live: dict[RequestId, Deadline]) -> list[RequestId]:
        expired: list[RequestId] = []
        heap = self._heap
        while heap and heap[0][0] <= now:
            at, request_id = heapq.heappop(heap)
            deadline = live.get(request_id)
            if deadline is not None and deadline.at == at:
                expired.append(request_id)
        return expired
