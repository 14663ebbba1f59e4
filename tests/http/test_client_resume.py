"""Resumption: a raw ASGI server closes a request's SSE stream early; the client comes back.

The server primes each stream (an id and empty data, with `retry`), sends part of it, and drops
the connection; the rest is served on GET with `Last-Event-ID`, as the 2025-11-25 spec says.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import orjson
import pytest

from mcpkit import Client
from mcpkit.errors import ProtocolError
from mcpkit.protocol.sse import encode_event
from mcpkit.transports.http.client import StreamableHTTPTransport

from .servers import serving

RETRY_MS = 150


class DroppingServer:
    """A Streamable HTTP server that answers tools/call only through a resumed stream.

    `drops`: how many GETs also close before the answer (each after one more event).
    `prime`: whether streams carry event ids at all (without, nothing can be resumed).
    """

    def __init__(
        self, *, drops: int = 0, prime: bool = True, resume: str = "answer", listen: bool = False
    ) -> None:
        self.drops = drops
        self.prime = prime
        self.resume = resume  # "answer", "fail" (503) or "poll" (a stream that closes empty)
        self.listen = listen  # offer a GET stream (primed, closed at once) instead of 405
        self.gets: list[tuple[str | None, float]] = []
        self.post_closed_at = 0.0
        self.pending: dict[str, Any] = {}  # stream id -> request id

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        if scope["method"] == "GET":
            await self._get(headers.get("last-event-id"), send)
            return
        if scope["method"] == "DELETE":
            await _respond(send, 200, b"")
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        request = orjson.loads(body)
        method, request_id = request.get("method"), request.get("id")
        if request_id is None:
            await _respond(send, 202, b"")
        elif method == "initialize":
            result = {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "dropper", "version": "0"},
            }
            await _respond(send, 200, _answer(request_id, result), session="s-1")
        elif method == "tools/call":
            stream = f"call{len(self.pending) + 1}"
            self.pending[stream] = request_id
            token = request["params"]["_meta"]["progressToken"]
            await _open_sse(send)
            if self.prime:
                await _sse(send, encode_event(b"", event_id=f"{stream}:0", retry=RETRY_MS))
            progress = {"progressToken": token, "progress": 1}
            event = _note("notifications/progress", progress)
            await _sse(send, encode_event(event, event_id=f"{stream}:1" if self.prime else None))
            self.post_closed_at = time.perf_counter()
            await send({"type": "http.response.body", "body": b""})  # gone before the answer
        else:
            await _respond(send, 200, _answer(request_id, {}))

    async def _get(self, last_event_id: str | None, send: Any) -> None:
        self.gets.append((last_event_id, time.perf_counter()))
        stream, _, number = (last_event_id or "").partition(":")
        if stream in ("", "get"):
            if not self.listen:
                await _respond(send, 405, b"")
                return
            await _open_sse(send)
            count = len(self.gets)
            await _sse(send, encode_event(b"", event_id=f"get:{count}", retry=RETRY_MS))
            await send({"type": "http.response.body", "body": b""})
            return
        request_id = self.pending[stream]
        if self.resume == "fail":
            await _respond(send, 503, b"")
            return
        await _open_sse(send)
        next_number = int(number) + 1
        if self.drops:
            self.drops -= 1
            note = _note("notifications/message", {"level": "info", "data": next_number})
            await _sse(send, encode_event(note, event_id=f"{stream}:{next_number}"))
        elif self.resume == "answer":
            result = {"content": [{"type": "text", "text": f"resumed after {last_event_id}"}]}
            event = encode_event(_answer(request_id, result), event_id=f"{stream}:{next_number}")
            await _sse(send, event)
        await send({"type": "http.response.body", "body": b""})


def _answer(request_id: Any, result: Any) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "id": request_id, "result": result})


def _note(method: str, params: Any) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "method": method, "params": params})


async def _respond(send: Any, status: int, body: bytes, session: str | None = None) -> None:
    headers = [(b"content-type", b"application/json")]
    if session is not None:
        headers.append((b"mcp-session-id", session.encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _open_sse(send: Any) -> None:
    headers = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]
    await send({"type": "http.response.start", "status": 200, "headers": headers})


async def _sse(send: Any, data: bytes) -> None:
    await send({"type": "http.response.body", "body": data, "more_body": True})


async def call(client: Client) -> tuple[dict[str, Any], list[float]]:
    progress: list[float] = []
    answer = await client.request(
        "tools/call",
        {"name": "anything", "arguments": {}},
        on_progress=lambda p, t, m: progress.append(p),
    )
    return answer, progress


async def test_resumes_with_last_event_id_after_the_retry_delay() -> None:
    server = DroppingServer()
    async with serving(server) as base, Client(base + "/mcp", timeout=5) as client:
        answer, progress = await call(client)
    assert progress == [1]
    assert answer["content"][0]["text"] == "resumed after call1:1"
    resumed = [(last, at) for last, at in server.gets if last is not None]
    assert [last for last, _ in resumed] == ["call1:1"]
    assert resumed[0][1] - server.post_closed_at >= RETRY_MS / 1000  # `retry` honoured
    assert server.gets[0][0] is None  # the listener GET (answered 405, not retried)
    assert len(server.gets) == 2


async def test_waits_for_retry_before_coming_back() -> None:
    server = DroppingServer(drops=2)
    logs: list[Any] = []

    async def on_log(params: Any) -> None:
        logs.append(params)

    async with serving(server) as base, Client(base + "/mcp", on_log=on_log) as client:
        started = time.perf_counter()
        answer, _ = await call(client)
        elapsed = time.perf_counter() - started
    assert answer["content"][0]["text"] == "resumed after call1:3"
    assert [last for last, _ in server.gets if last is not None] == [
        "call1:1",
        "call1:2",
        "call1:3",
    ]
    assert elapsed >= 3 * RETRY_MS / 1000
    assert [entry.data for entry in logs] == [2, 3]  # what each dropped GET carried


async def test_gives_up_after_bounded_attempts() -> None:
    server = DroppingServer(resume="fail")
    async with serving(server) as base:
        transport = StreamableHTTPTransport(base + "/mcp", max_reconnects=2)
        async with Client(transport, timeout=5) as client:
            with pytest.raises(ProtocolError, match=r"gave up resuming .* after 2 failed attempts"):
                await call(client)
            await client.ping()  # the connection itself is fine
    assert len([last for last, _ in server.gets if last is not None]) == 2


async def test_a_stream_without_event_ids_cannot_be_resumed() -> None:
    server = DroppingServer(prime=False)
    async with serving(server) as base, Client(base + "/mcp", timeout=5) as client:
        with pytest.raises(ProtocolError, match="closed the response stream before answering"):
            await call(client)
        assert await asyncio.wait_for(client.ping(), 5) is None
    assert all(last is None for last, _ in server.gets)


async def test_a_polling_server_is_followed_until_the_request_is_cancelled() -> None:
    server = DroppingServer(resume="poll")
    async with serving(server) as base, Client(base + "/mcp") as client:
        task = asyncio.create_task(call(client))
        await asyncio.sleep(5.5 * RETRY_MS / 1000)
        assert not task.done()  # polling empty streams is no failure
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        polls = len(server.gets)
        assert polls >= 5
        await asyncio.sleep(2 * RETRY_MS / 1000)
        assert len(server.gets) == polls  # cancelled: no more polling


async def test_the_listener_stream_comes_back_after_retry_with_last_event_id() -> None:
    server = DroppingServer(listen=True)
    async with serving(server) as base, Client(base + "/mcp"):
        while len(server.gets) < 3:
            await asyncio.sleep(0.02)
    (first, t0), (second, t1), (third, t2) = server.gets[:3]
    assert (first, second, third) == (None, "get:1", "get:2")
    assert t1 - t0 >= RETRY_MS / 1000 and t2 - t1 >= RETRY_MS / 1000
    assert t1 - t0 < 2 * RETRY_MS / 1000
