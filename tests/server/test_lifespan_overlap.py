"""A connection that starts while the last one's lifespan is closing: it waits, then gets a
lifespan of its own (found through the proxy: two in-process clients one after the other)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from mcpkit import Server


async def test_a_connection_starting_while_the_lifespan_closes_gets_a_fresh_one() -> None:
    events: list[str] = []

    @contextlib.asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[dict[str, int]]:
        events.append("open")
        yield {"open": len(events)}
        await asyncio.sleep(0.05)  # a slow close: a database pool draining
        events.append("closed")

    server = Server("s", lifespan=lifespan)
    first = server.running()
    await first.__aenter__()
    closing = asyncio.ensure_future(first.__aexit__(None, None, None))
    await asyncio.sleep(0)  # the close has begun
    async with server.running():
        assert events == ["open", "closed", "open"]  # waited for the close, then opened
        await closing
        assert server.lifespan_state is not None  # not cleared by the earlier close
    assert events == ["open", "closed", "open", "closed"] and server.lifespan_state is None
