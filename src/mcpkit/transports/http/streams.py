"""One HTTP response per stream: JSON when the answer comes alone, SSE when it does not.

A `ResponseStream` collects the messages routed to it (the answers and related messages of
one POST, or the unrelated messages of the GET stream). `respond` turns it into an HTTP
response: in "auto" mode it waits for the first message and sends plain JSON if that is the
final answer, and switches to an event stream otherwise. SSE is framed here, by hand; each
event sent is also appended to the event store under an id naming its stream, so a client
that lost the stream can resume. A client that goes away does not cancel anything: the
stream detaches and later messages only go to the store.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from mcpkit.protocol import Outgoing
from mcpkit.protocol.sse import encode_comment, encode_event

Send = Callable[[dict[str, Any]], Awaitable[None]]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Record = Callable[[str, bytes], str | None]  # (stream id, data) -> event id

QUICK = 0.05  # s: how long a stream waits before it watches for the client leaving
SSE_HEADERS = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"x-accel-buffering", b"no"),
]


class ResponseStream:
    """Messages for one HTTP response, buffered until its handler sends them."""

    __slots__ = (
        "_waiter",
        "attached",
        "endless",
        "finished",
        "items",
        "on_final",
        "released",
        "stream_id",
    )

    def __init__(self, stream_id: str, *, endless: bool = False) -> None:
        self.stream_id = stream_id
        self.endless = endless  # a GET stream: no message ends it, only `end()`
        self.items: list[Outgoing] = []
        self.finished = False  # the final answer is in `items` (or the stream was ended)
        self.attached = True  # an HTTP response is sending what arrives
        self.on_final: Callable[[Outgoing], None] | None = None
        self.released = False  # the server ends this HTTP response; the client resumes
        self._waiter: asyncio.Future[None] | None = None

    def push(self, out: Outgoing) -> None:
        """Add a message; a request's answer (`final`) finishes a stream that is not endless."""
        self.items.append(out)
        if out.final and not self.endless:
            self.finished = True
            if self.on_final is not None:
                self.on_final(out)
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def end(self) -> None:
        """No more messages (cancelled request, closed session, server closed it early)."""
        self.finished = True
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def release(self) -> None:
        """End the HTTP response now but not the stream (2025-11-25 polling)."""
        self.released = True
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def wait(self, timeout: float | None = None) -> bool:
        """Until something arrives (True) or `timeout` passes (False)."""
        if self.items or self.finished or self.released:
            return True
        loop = asyncio.get_running_loop()
        waiter = self._waiter = loop.create_future()
        timer = None if timeout is None else loop.call_later(timeout, _wake, waiter)
        try:
            await waiter
        finally:
            self._waiter = None
            if timer is not None:
                timer.cancel()
        return bool(self.items or self.finished or self.released)

    def take(self) -> list[Outgoing]:
        items, self.items = self.items, []
        return items

    def nudge(self) -> None:
        """Wake a waiter with nothing new (it checks on its client)."""
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)


class Ticker:
    """One timer for every response waiting for its first message (one per app): a stream
    still waiting after a whole tick (QUICK to 2 QUICK s) is nudged to start watching for its
    client leaving. A timer per response would cost about a tenth of a quick answer."""

    __slots__ = ("_generation", "_handle", "_waiting")

    def __init__(self) -> None:
        self._generation = 0
        self._waiting: dict[ResponseStream, int] = {}
        self._handle: asyncio.TimerHandle | None = None

    def enter(self, stream: ResponseStream) -> None:
        self._waiting[stream] = self._generation
        if self._handle is None:
            self._handle = asyncio.get_running_loop().call_later(QUICK, self._tick)

    def leave(self, stream: ResponseStream) -> None:
        self._waiting.pop(stream, None)

    def _tick(self) -> None:
        self._handle = None
        current = self._generation
        self._generation = current + 1
        for stream, entered in list(self._waiting.items()):
            if entered < current:  # a whole tick has passed since it started waiting
                stream.nudge()
        if self._waiting:
            self._handle = asyncio.get_running_loop().call_later(QUICK, self._tick)


async def respond(
    send: Send,
    receive: Receive,
    stream: ResponseStream,
    *,
    mode: str,
    headers: list[tuple[bytes, bytes]],
    record: Record,
    priming_retry: int | None,
    keepalive: float | None,
    divert: Callable[[Outgoing], None],
    status_of: Callable[[Outgoing], int] | None = None,
    ticker: Ticker | None = None,
) -> bool:
    """Send `stream` as JSON (one final answer, nothing before it) or as SSE.

    2026-07-28 (`status_of`: the answer's HTTP status; `ticker`: a client leaving cancels):
    the wait for the first message watches for the client going away too, and an error
    answer that comes alone leaves as JSON with its status even in "sse" mode. Returns
    False when the client went away before the stream finished.
    """
    watch = Watch(receive, ticker) if ticker is not None else None
    if mode != "sse" or watch is not None:
        if not await _wait(stream, watch):
            return False
        if mode == "json":  # related messages cannot travel in a JSON body: the GET stream
            while not stream.finished:
                for data in stream.take():
                    divert(data)
                if not await _wait(stream, watch):
                    return False
            for data in stream.items[:-1]:
                divert(data)
            del stream.items[:-1]
        if stream.finished and len(stream.items) <= 1:
            items = stream.take()
            status = 200 if status_of is None or not items else status_of(items[0])
            if mode != "sse" or status != 200:
                if items:
                    await send_json(send, status, items[0].data, headers)
                else:
                    await send_json(send, 202, b"", headers)  # ended unanswered (cancelled)
                return True
            stream.items[:0] = items
    return await stream_events(
        send,
        receive,
        stream,
        headers=headers,
        record=record,
        priming_retry=priming_retry,
        keepalive=keepalive,
        watch=watch,
    )


class Watch:
    """Notices the client going away (http.disconnect), started only once needed."""

    __slots__ = ("gone", "receive", "ticker")

    def __init__(self, receive: Receive, ticker: Ticker | None = None) -> None:
        self.receive = receive
        self.ticker = ticker
        self.gone: asyncio.Future[None] | None = None

    def start(self) -> asyncio.Future[None]:
        if self.gone is None:
            self.gone = asyncio.ensure_future(_disconnected(self.receive))
        return self.gone

    def stop(self) -> None:
        if self.gone is not None:
            self.gone.cancel()


async def _wait(stream: ResponseStream, watch: Watch | None) -> bool:
    """Until something arrives (True) or, when watching, the client goes away (False)."""
    if watch is None:
        await stream.wait()
        return True
    waiting = watch.ticker
    if watch.gone is None and waiting is not None:
        waiting.enter(stream)
        try:
            if await stream.wait():
                return True
        finally:
            waiting.leave(stream)
    gone = watch.start()
    while True:
        arrived = await _next(stream, gone, None)
        if arrived is None:
            watch.stop()
            return False
        if arrived:
            return True


async def send_json(
    send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    out = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    if headers:
        out.extend(headers)
    if not body:
        out = out[1:]
    await send({"type": "http.response.start", "status": status, "headers": out})
    await send({"type": "http.response.body", "body": body})


async def stream_events(
    send: Send,
    receive: Receive,
    stream: ResponseStream,
    *,
    headers: list[tuple[bytes, bytes]],
    record: Record,
    priming_retry: int | None,
    keepalive: float | None,
    replay: list[tuple[str, bytes]] | None = None,
    preamble: bytes = b"",
    watch: Watch | None = None,
) -> bool:
    """Send an event stream until the stream finishes (True) or the client goes away
    (False).

    A stream whose messages come quickly (the common case) is sent without a task watching
    for the client to leave; the watcher starts once the stream has to wait.
    """
    await stream.wait(QUICK)  # a quick answer leaves with the headers and the priming event
    await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS + headers})
    first = preamble
    if priming_retry is not None:
        primer = record(stream.stream_id, b"")
        if primer is not None:
            first += encode_event(b"", event_id=primer, retry=priming_retry)
    first += b"".join(encode_event(data, event_id=eid) for eid, data in replay or ())
    watch = watch or Watch(receive)
    gone = watch.gone
    try:
        while True:
            chunk = first + b"".join(
                encode_event(out.data, event_id=record(stream.stream_id, out.data))
                for out in stream.take()
            )
            first = b""
            if stream.finished or stream.released:
                stream.released = False
                await send({"type": "http.response.body", "body": chunk})
                return True
            if chunk:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            if gone is None:
                if await stream.wait(QUICK):
                    continue
                gone = watch.start()
            arrived = await _next(stream, gone, keepalive)
            if arrived is None:
                return False  # the client went away
            if not arrived:
                keep = {"type": "http.response.body", "body": encode_comment(), "more_body": True}
                await send(keep)
    finally:
        watch.stop()
        stream.attached = False
        for out in stream.take():  # arrived while we were leaving: keep them for a resume
            record(stream.stream_id, out.data)


async def _next(
    stream: ResponseStream, gone: asyncio.Future[None], keepalive: float | None
) -> bool | None:
    """True: something arrived; False: time for a keep-alive; None: the client is gone."""
    waiter = asyncio.ensure_future(stream.wait())
    done, _ = await asyncio.wait(
        (waiter, gone), timeout=keepalive, return_when=asyncio.FIRST_COMPLETED
    )
    if waiter not in done:
        waiter.cancel()
    if gone in done:
        return None
    return bool(done)


def no_event_ids(stream_id: str, data: bytes) -> None:
    """The `Record` of a stream that nobody can resume: its events get no ids."""
    return None


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


async def _disconnected(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
