"""Bounded upstream starts: how long the proxy and the gateway wait for an upstream to answer.

An upstream client's opening (spawning a stdio server, its `initialize`) is waited for at most
`start_timeout` seconds (`DEFAULT_START_TIMEOUT` unless set; a gateway entry's `"timeout"`).
Past it the waiter gets `RequestTimeout` at once, and the opening is cancelled in the
background: closing a hung process takes seconds (stdin closed, then SIGTERM, then SIGKILL)
that no request should pay. Those closings are awaited when the proxy stops.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from mcpkit.errors import RequestTimeout

# Seconds the proxy (and each gateway entry without a "timeout") waits for its upstream.
DEFAULT_START_TIMEOUT = 10.0

T = TypeVar("T")


class Openings:
    """Runs openings within a bound; keeps those given up on until they are closed."""

    def __init__(self) -> None:
        self._abandoned: set[asyncio.Future[Any]] = set()

    async def within(self, opening: Awaitable[T], seconds: float | None, what: str) -> T:
        """`opening`'s result. Raises what it raises, or RequestTimeout (naming `what`)
        after `seconds` (None: no bound)."""
        task = asyncio.ensure_future(opening)
        try:
            done, _ = await asyncio.wait({task}, timeout=seconds)
        except asyncio.CancelledError:
            self._abandon(task)
            raise
        if task not in done:
            self._abandon(task)
            raise RequestTimeout(what, seconds or 0.0)
        return task.result()

    def _abandon(self, task: asyncio.Future[Any]) -> None:
        task.cancel()
        self._abandoned.add(task)
        task.add_done_callback(_forget(self._abandoned))

    async def aclose(self) -> None:
        """Wait for the openings given up on to be closed."""
        if self._abandoned:
            await asyncio.wait(set(self._abandoned))


def _forget(tasks: set[asyncio.Future[Any]]) -> Callable[[asyncio.Future[Any]], None]:
    def done(task: asyncio.Future[Any]) -> None:
        tasks.discard(task)
        if not task.cancelled():
            task.exception()  # retrieved: a failed opening given up on is no news

    return done


__all__ = ["DEFAULT_START_TIMEOUT", "Openings"]
