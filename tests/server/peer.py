"""A raw client session on a `Server` in process, recording the notifications it gets.

For server tests that need to see the wire: notifications, exact error codes, client
capabilities and server-to-client requests answered by a plain function.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

from mcpkit import Server
from mcpkit.protocol import Connection, ConnectionConfig, NotificationReceived
from mcpkit.runtime import Session
from mcpkit.transports.memory import memory_pair


class Peer:
    def __init__(self, session: Session) -> None:
        self.session = session
        self.notifications: list[tuple[str, Any]] = []
        self.arrived = asyncio.Event()

    async def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        return await self.session.request(method, params)

    async def call(self, name: str, **arguments: Any) -> dict[str, Any]:
        return await self.request("tools/call", {"name": name, "arguments": arguments})

    async def read(self, uri: str) -> dict[str, Any]:
        return await self.request("resources/read", {"uri": uri})

    async def next_notification(self, method: str) -> Any:
        while True:
            for seen, params in self.notifications:
                if seen == method:
                    self.notifications.remove((seen, params))
                    return params
            self.arrived.clear()
            await asyncio.wait_for(self.arrived.wait(), 2)

    async def settle(self) -> list[tuple[str, Any]]:
        """Everything that arrived up to now (a ping round trip flushes what was sent)."""
        await self.request("ping")
        seen, self.notifications = self.notifications, []
        return seen


@contextlib.asynccontextmanager
async def connect(
    server: Server,
    capabilities: dict[str, Any] | None = None,
    answer: Any = None,
    version: str | None = None,
) -> AsyncIterator[Peer]:
    """Connect a client declaring `capabilities`; `answer(session, request)` serves the
    server's requests (sampling, elicitation, roots)."""
    client_end, server_end = memory_pair()
    served = asyncio.create_task(server.serve(server_end))
    peer: Peer

    def on_notification(session: Session, event: NotificationReceived) -> None:
        peer.notifications.append((event.method, event.params))
        peer.arrived.set()

    config = ConnectionConfig(
        role="client", info={"name": "tester", "version": "9"}, capabilities=capabilities or {}
    )
    session = Session(
        Connection(config), client_end, on_request=answer, on_notification=on_notification
    )
    peer = Peer(session)
    session.start()
    await session.initialize(version=version)
    await session.request("ping")  # the server has now seen notifications/initialized too
    try:
        yield peer
    finally:
        await session.close()
        await asyncio.wait_for(served, 2)
