"""Seeing the raw messages: a transport wrapper that reports every JSON-RPC message the
inspector's client writes or reads, and an httpx auth that reports the `Mcp-*` headers of each
HTTP exchange.

How this works: `InspectorClient` is a `Client` whose `_open` puts the transport of the new
session in `observed(...)` (same kind, pull or push, as the session tells them apart by type)
before the session's pump has read anything, so the handshake is seen too. Nothing in the
client or the transports changes: the observation costs only the inspector's own connections
(one JSON decode per message); other clients pay nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import orjson

from mcpkit.client import Client
from mcpkit.protocol import Outgoing, RequestId
from mcpkit.protocol.jsonrpc import ErrorResponse, Invalid, Notification, Request, Response
from mcpkit.runtime.transport import Incoming, PullTransport, PushTransport, Transport

if TYPE_CHECKING:
    from mcpkit.runtime import Session

Observer = Callable[[str, Any], None]  # ("send" | "recv", the message as JSON)


def to_json(data: Incoming) -> Any:
    """A message as JSON: decoded bytes, or what `jsonrpc.parse` made of them."""
    if isinstance(data, bytes | bytearray | memoryview):
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            return {"invalid": bytes(data[:200]).decode("utf-8", "replace")}
    if isinstance(data, list):
        return [to_json(item) for item in data]
    return _parsed(data)


def _parsed(message: Any) -> Any:
    if isinstance(message, Request):
        return _drop_none({"jsonrpc": "2.0", "id": message.id, "method": message.method,
                           "params": message.params})  # fmt: skip
    if isinstance(message, Notification):
        return _drop_none({"jsonrpc": "2.0", "method": message.method, "params": message.params})
    if isinstance(message, Response):
        return {"jsonrpc": "2.0", "id": message.id, "result": message.result}
    if isinstance(message, ErrorResponse):
        return {"jsonrpc": "2.0", "id": message.id, "error": message.error}
    if isinstance(message, Invalid):
        return {"invalid": message.message, "id": message.id}
    return {"invalid": repr(message)[:200]}


def _drop_none(wire: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in wire.items() if value is not None}


class _Delegate:
    """What both wrappers pass through to the transport they wrap."""

    _inner: Transport
    _see: Observer

    def _wrap(self, inner: Transport, see: Observer) -> None:
        self._see = see
        self.peer_name = inner.peer_name
        self.principal = inner.principal

    def write(self, messages: list[Outgoing]) -> None:
        for out in messages:
            self._see("send", to_json(out.data))
        self._inner.write(messages)

    def backlogged(self) -> bool:
        return self._inner.backlogged()

    async def drain(self) -> None:
        await self._inner.drain()

    async def close(self) -> None:
        await self._inner.close()

    async def closed_reason(self) -> str:
        return await self._inner.closed_reason()

    def close_stream(self, request_id: RequestId) -> bool:
        return self._inner.close_stream(request_id)

    def __getattr__(self, name: str) -> Any:
        # what a transport offers beyond the interface (session_id, keep_session, ...)
        return getattr(self._inner, name)


class ObservedPull(_Delegate, PullTransport):
    _inner: PullTransport

    def __init__(self, inner: PullTransport, see: Observer) -> None:
        self._inner = inner
        self._wrap(inner, see)

    async def read(self) -> Incoming | None:
        data = await self._inner.read()
        if data is not None:
            self._see("recv", to_json(data))
        return data


class ObservedPush(_Delegate, PushTransport):
    _inner: PushTransport

    def __init__(self, inner: PushTransport, see: Observer) -> None:
        self._inner = inner
        self._wrap(inner, see)

    def attach(
        self,
        receive: Callable[[Incoming], None],
        chunk_done: Callable[[], None],
        eof: Callable[[], None],
    ) -> None:
        see = self._see

        def seen(data: Incoming) -> None:
            see("recv", to_json(data))
            receive(data)

        self._inner.attach(seen, chunk_done, eof)


def observed(transport: PullTransport | PushTransport, see: Observer) -> Any:
    if isinstance(transport, PushTransport):
        return ObservedPush(transport, see)
    return ObservedPull(transport, see)


class InspectorClient(Client):
    """A `Client` whose every message goes to `observer` (set before `async with`)."""

    observer: Observer | None = None

    async def _open(self) -> Session:
        session = await super()._open()
        # The session has started its pump task, which has not run yet (nothing awaited
        # since): it reads through the wrapper from its first message, the handshake's.
        if self.observer is not None:
            session.transport = observed(session.transport, self.observer)
        return session


def watching_headers(auth: Any, on_headers: Callable[[dict[str, str]], None]) -> Any:
    """An httpx auth that reports the `Mcp-*` headers of each request sent and response
    received to `on_headers`, and otherwise is `auth` (None: no authentication). An auth is
    the one place `HTTPOptions` offers that sees every exchange of the client's transport."""
    import httpx

    class HeaderWatch(httpx.Auth):
        requires_request_body = getattr(auth, "requires_request_body", False)
        requires_response_body = getattr(auth, "requires_response_body", False)

        async def async_auth_flow(self, request: httpx.Request) -> Any:
            if auth is None:
                on_headers(_mcp_headers(request.headers))
                response = yield request
                on_headers(_mcp_headers(response.headers))
                return
            flow = auth.async_auth_flow(request)
            request = await flow.__anext__()
            while True:
                on_headers(_mcp_headers(request.headers))
                response = yield request
                on_headers(_mcp_headers(response.headers))
                try:
                    request = await flow.asend(response)
                except StopAsyncIteration:
                    return

    return HeaderWatch()


def _mcp_headers(headers: Any) -> dict[str, str]:
    return {
        "-".join(part.capitalize() for part in name.split("-")): value
        for name, value in headers.items()
        if name.lower().startswith("mcp-")
    }
