"""Seeing the raw messages: a transport wrapper that reports every JSON-RPC message the
inspector's client writes or reads, and an httpx client that reports the `Mcp-*` headers of
each HTTP exchange.

How this works: `InspectorClient` is a `Client` whose `_open` wraps the transport it opens in
`observed(...)` (same kind, pull or push, as the session tells them apart by type) before the
session starts, so the handshake is seen too. Nothing in the client or the transports changes:
the observation costs only the inspector's own connections (one JSON decode per message).
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
    """A `Client` whose every message goes to `observer` and, over HTTP, the `Mcp-*` headers
    of every exchange to `on_headers` (both set before `async with`).

    Its `_open` is `ClientCore._open` with the transport wrapped: keep the two alike (a hook in
    ClientCore would spare the copy; the inspector is its only user so far)."""

    observer: Observer | None = None
    on_headers: Callable[[dict[str, str]], None] | None = None

    async def _open(self) -> Session:
        from mcpkit.protocol import Connection, ConnectionConfig
        from mcpkit.protocol.tasks import EXTENSION as TASKS_EXTENSION
        from mcpkit.runtime import Session

        transport = await self._open_transport()
        if self.observer is not None:
            transport = observed(transport, self.observer)
        capabilities = {**self._requests.capabilities(), "extensions": {TASKS_EXTENSION: {}}}
        config = ConnectionConfig(role="client", info=self._info, capabilities=capabilities)
        session = Session(
            Connection(config),
            transport,
            on_request=self._requests,
            on_notification=self._on_notification,
        )
        session.start()
        return session

    async def _open_transport(self) -> PullTransport | PushTransport:
        from mcpkit.client._targets import HTTPOptions, is_url, open_transport

        target, tool_headers = self._target, self._catalog.header_paths_for
        if not is_url(target) or self.on_headers is None:
            return await open_transport(target, self._stdio, self._http, tool_headers)
        from mcpkit.transports.http.client import StreamableHTTPTransport

        options = self._http or HTTPOptions()
        return StreamableHTTPTransport(
            target,
            timeout=options.timeout,
            max_reconnects=options.max_reconnects,
            fallback=options.fallback,
            renew_session=options.renew_session,
            client=_watched_http(options, self.on_headers),
            tool_headers=tool_headers,
        )


def _watched_http(options: Any, on_headers: Callable[[dict[str, str]], None]) -> Any:
    """The httpx client `_http` in client/_targets.py makes, plus hooks reporting the `Mcp-*`
    headers of each request sent and response received."""
    import httpx

    async def request_seen(request: httpx.Request) -> None:
        on_headers(_mcp_headers(request.headers))

    async def response_seen(response: httpx.Response) -> None:
        on_headers(_mcp_headers(response.headers))

    return httpx.AsyncClient(
        headers=dict(options.headers or {}),
        auth=options.auth,
        timeout=httpx.Timeout(options.timeout, read=None, pool=None),
        follow_redirects=True,
        event_hooks={"request": [request_seen], "response": [response_seen]},
    )


def _mcp_headers(headers: Any) -> dict[str, str]:
    return {
        "-".join(part.capitalize() for part in name.split("-")): value
        for name, value in headers.items()
        if name.lower().startswith("mcp-")
    }
