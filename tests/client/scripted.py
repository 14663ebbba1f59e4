"""A scripted MCP server in process: answers exactly what a test tells it to, records the rest.

For behaviour a well-behaved server never shows — endless cursors, results that break their
own outputSchema, malformed answers, error codes — and to see what the client sent on the wire.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import orjson

from mcpkit.protocol import (
    Connection,
    ConnectionConfig,
    NotificationReceived,
    Outgoing,
    RequestReceived,
)
from mcpkit.runtime import Incoming, PullTransport, Session
from mcpkit.transports.memory import MemoryTransport, memory_pair

JSONObject = dict[str, Any]
Handler = Callable[[JSONObject], Any]

DEFAULT_CAPABILITIES: JSONObject = {
    "tools": {"listChanged": True},
    "resources": {"subscribe": True, "listChanged": True},
    "prompts": {"listChanged": True},
    "completions": {},
    "logging": {},
}


class ScriptedServer:
    """`handlers` map a method to `params -> result dict` (or an awaitable of one)."""

    def __init__(
        self, handlers: dict[str, Handler], capabilities: JSONObject | None = None
    ) -> None:
        self.handlers = handlers
        self.requests: list[tuple[str, JSONObject | None]] = []
        self.notifications: list[tuple[str, JSONObject | None]] = []
        self.arrived = asyncio.Event()
        self.initialized = asyncio.Event()
        client_end, server_end = memory_pair()
        self.client_end = Recording(client_end)
        config = ConnectionConfig(
            role="server",
            info={"name": "scripted", "version": "1"},
            capabilities=DEFAULT_CAPABILITIES if capabilities is None else capabilities,
        )
        self.session = Session(
            Connection(config),
            server_end,
            on_request=self._on_request,
            on_notification=self._on_notification,
            on_initialized=lambda event: self.initialized.set(),
        )
        self._task = asyncio.get_running_loop().create_task(self.session.run())

    def _on_request(self, session: Session, event: RequestReceived) -> Any:
        self.requests.append((event.method, event.params))
        self.arrived.set()
        handler = self.handlers.get(event.method)
        if handler is None:
            from mcpkit.errors import MethodNotFound

            raise MethodNotFound(event.method)
        outcome = handler(event.params or {})
        if isinstance(outcome, dict):
            return outcome
        return _awaited(outcome)

    def _on_notification(self, session: Session, event: NotificationReceived) -> None:
        self.notifications.append((event.method, event.params))
        self.arrived.set()

    async def ready(self) -> None:
        """Until the handshake is complete on the server's side too (it may then send)."""
        await asyncio.wait_for(self.initialized.wait(), 2)

    def methods(self) -> list[str]:
        return [method for method, _ in self.requests]

    async def wait_for(self, predicate: Callable[[], bool], timeout: float = 2.0) -> None:
        """Until `predicate()` holds, woken by each message the server receives."""
        async with asyncio.timeout(timeout):
            while not predicate():
                self.arrived.clear()
                await self.arrived.wait()

    async def stop(self) -> None:
        await self.session.close()
        await asyncio.wait_for(self._task, 2)


async def _awaited(outcome: Any) -> Any:
    return await outcome


class Recording(PullTransport):
    """The client's end of the pair, keeping every message the client wrote (decoded)."""

    def __init__(self, inner: MemoryTransport) -> None:
        self.inner = inner
        self.written: list[JSONObject] = []

    def write(self, messages: list[Outgoing]) -> None:
        self.written += [orjson.loads(out.data) for out in messages]
        self.inner.write(messages)

    async def read(self) -> Incoming | None:
        return await self.inner.read()

    async def close(self) -> None:
        await self.inner.close()

    async def closed_reason(self) -> str:
        return await self.inner.closed_reason()
