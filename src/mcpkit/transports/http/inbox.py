"""What the two HTTP client transports (Streamable HTTP, legacy HTTP+SSE) share: their
loops put each message that arrives in one queue, which the session reads."""

from __future__ import annotations

import asyncio

from mcpkit.runtime.transport import Incoming, PullTransport


class InboxTransport(PullTransport):
    """A `PullTransport` read from `_inbox` (None in it: EOF, and every later read too)."""

    _inbox: asyncio.Queue[Incoming | None]
    _eof: bool = False

    async def read(self) -> Incoming | None:
        if self._eof:
            return None
        data = await self._inbox.get()
        if data is None:
            self._eof = True
        return data
