"""An in-memory transport pair: two ends joined by queues, for tests and in-process clients."""

from __future__ import annotations

import asyncio

from mcpkit.protocol import Outgoing
from mcpkit.runtime.transport import PullTransport

CLOSE_WAIT = 5.0
FAILED_WAIT = 1.0  # how long EOF waits for the in-process server's task to say why it ended


class MemoryTransport(PullTransport):
    """One end of an in-memory pair. Messages keep their bytes form, as on a real wire."""

    def __init__(self, inbox: asyncio.Queue[bytes | None], outbox: asyncio.Queue[bytes | None]):
        self._inbox = inbox
        self._outbox = outbox
        self._closed = False
        # An in-process server serving the other end: closing waits for it to finish (its
        # lifespan closed, its upstream processes ended), at most CLOSE_WAIT s.
        self.served: asyncio.Task[None] | None = None

    async def read(self) -> bytes | None:
        if self._closed:
            return None
        data = await self._inbox.get()
        if data is None:
            self._closed = True
        return data

    def write(self, messages: list[Outgoing]) -> None:
        if self._closed:
            raise ConnectionError("the in-memory transport is closed")
        for out in messages:
            self._outbox.put_nowait(out.data)

    async def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._outbox.put_nowait(None)  # the other end sees EOF
            self._inbox.put_nowait(None)  # and so does our own reader
        served = self.served
        if served is not None and served is not asyncio.current_task():
            await asyncio.wait([served], timeout=CLOSE_WAIT)

    async def closed_reason(self) -> str:
        """Why the other end closed: an in-process server that failed (it refused to start,
        or crashed) names its error, which the client's ConnectionClosed then carries."""
        served = self.served
        if served is not None and served is not asyncio.current_task():
            await asyncio.wait([served], timeout=FAILED_WAIT)
            failed = served_error(served)
            if failed is not None:
                return f"the in-process server stopped: {type(failed).__name__}: {failed}"
        return "the in-memory peer closed the connection"


def served_error(task: asyncio.Task[None]) -> BaseException | None:
    """The error an in-process server's task ended with (None: still running, cancelled or
    ended cleanly). Reading it is what keeps asyncio from logging "Task exception was never
    retrieved" beside the client's own ConnectionClosed."""
    if not task.done() or task.cancelled():
        return None
    return task.exception()


def memory_pair() -> tuple[MemoryTransport, MemoryTransport]:
    """Two joined ends: (client side, server side)."""
    a: asyncio.Queue[bytes | None] = asyncio.Queue()
    b: asyncio.Queue[bytes | None] = asyncio.Queue()
    return MemoryTransport(a, b), MemoryTransport(b, a)
