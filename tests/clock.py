"""A clock a test moves by hand, for the `clock=` parameter of mcpkit's time-keeping classes
(verifiers, caches, stores, the client's result cache): time passes when the test says so,
never by sleeping."""

from __future__ import annotations

import time


class FakeClock:
    """Seconds, standing still until `advance`; starts at the real wall-clock time (token
    claims and records made by real code stay consistent with it) unless told otherwise."""

    def __init__(self, now: float | None = None) -> None:
        self.now = time.time() if now is None else now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds
