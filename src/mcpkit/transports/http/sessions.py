"""HTTP sessions: a message transport per MCP session, and a bounded registry of them.

`HTTPSessionTransport` is what `Server.serve` runs a session on: `read()` yields the POST
bodies fed to it, and `write()` routes each outgoing message by the id of the request it
relates to -- to that request's `ResponseStream` while the request is open, otherwise to the
session's GET stream (one message goes to one stream). The registry mints session ids,
caps their number and ends sessions left idle; ending a session closes its transport, which
ends `serve`, and drops every reference so the memory goes back.

`ModernLanes` serve 2026-07-28 requests, which belong to no session: a few long-lived
serving connections in no handshake state (the core serves each modern request on its own,
whatever the state), shared by every client. A request goes to the first lane where its id
is not in flight, so two clients that both count from 1 never meet; spare lanes beyond
`keep` end when they fall idle. No event store: no event ids, nothing to resume. A lane is
pushed to (`ModernLane.attach`): a request fed to it is served inside `feed`, so a handler
that answers at once has answered before the POST's task waits for anything.
"""

from __future__ import annotations

import asyncio
import secrets
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

from mcpkit.protocol import Outgoing, RequestId
from mcpkit.protocol.http import (
    STANDALONE_STREAM,
    cancellation,
    event_id,
    final_prefix,
    is_final,
)
from mcpkit.protocol.jsonrpc import Request
from mcpkit.transports.http.event_store import EventStore
from mcpkit.transports.http.streams import ResponseStream

Serve = Callable[[Any], Awaitable[None]]


class HTTPSessionTransport:
    """The session side of Streamable HTTP, for one MCP session (or one stateless POST)."""

    def __init__(self, session_id: str, event_store: EventStore | None) -> None:
        self.session_id = session_id
        self.event_store = event_store
        self.pending: dict[RequestId, ResponseStream] = {}
        self.standalone = ResponseStream(STANDALONE_STREAM)
        self.standalone.attached = False
        self.ignored: RequestId | None = None  # the synthetic initialize of a stateless POST
        self._inbox: deque[bytes | None] = deque()
        self._reader: asyncio.Future[None] | None = None
        self._streams = 0
        self._events = 0
        self._closed = False

    # -- fed by the app ----------------------------------------------------------------------

    def feed(self, body: bytes | None) -> None:
        if self._closed:
            return
        self._inbox.append(body)
        reader = self._reader
        if reader is not None and not reader.done():
            reader.set_result(None)

    def open_stream(self, request_ids: tuple[RequestId, ...], batch: bool) -> ResponseStream:
        self._streams += 1
        stream = ResponseStream(str(self._streams), final_prefix(request_ids[0]), batch)
        for request_id in request_ids:
            self.pending[request_id] = stream
        return stream

    def close_stream(self, stream: ResponseStream) -> None:
        """The request was cancelled: end its response; a late answer is dropped."""
        for request_id in [rid for rid, s in self.pending.items() if s is stream]:
            del self.pending[request_id]
        stream.end()

    def close_sse_stream(self, request_id: RequestId) -> bool:
        """End the SSE response of an open request now; the client resumes with GET and
        Last-Event-ID (2025-11-25). False when it cannot (no event store, no such stream)."""
        stream = self.pending.get(request_id)
        if stream is None or self.event_store is None or not stream.attached:
            return False
        stream.release()
        return True

    def busy(self) -> bool:
        return bool(self.pending) or self.standalone.attached

    def record(self, stream_id: str, data: bytes) -> str | None:
        """Give an SSE event its id and keep it for a resume (no store: no id)."""
        store = self.event_store
        if store is None:
            return None
        self._events += 1
        eid = event_id(stream_id, self._events)
        store.append(self.session_id, eid, data)
        return eid

    # -- MessageTransport ----------------------------------------------------------------------

    async def read(self) -> bytes | None:
        inbox = self._inbox
        while not inbox:
            if self._closed:
                return None
            self._reader = asyncio.get_running_loop().create_future()
            try:
                await self._reader
            finally:
                self._reader = None
        return inbox.popleft()

    def write(self, messages: list[Outgoing]) -> None:
        pending = self.pending
        for data, related in messages:
            stream = pending.get(related) if related is not None else None
            if stream is None:
                if related is not None and related == self.ignored:
                    continue
                self._deliver(self.standalone, data, final=False)
                continue
            final = is_final(data, stream.prefix, stream.batch)
            if final:
                for request_id in [rid for rid, s in pending.items() if s is stream]:
                    del pending[request_id]
            self._deliver(stream, data, final)

    def divert(self, data: bytes) -> None:
        """A related message that cannot travel on its request's JSON answer."""
        self._deliver(self.standalone, data, final=False)

    def _deliver(self, stream: ResponseStream, data: bytes, final: bool) -> None:
        if stream.attached:
            stream.push(data, final)
        else:  # nobody is listening: keep it for a resume, or drop it
            self.record(stream.stream_id, data)

    def backlogged(self) -> bool:
        return False

    async def drain(self) -> None:
        return None

    async def close(self) -> None:
        self.shut()

    def shut(self) -> None:
        """Synchronous close: the reader sees EOF, open responses end."""
        if self._closed:
            return
        self._closed = True
        self._inbox.clear()
        self._inbox.append(None)
        if self._reader is not None and not self._reader.done():
            self._reader.set_result(None)
        for stream in set(self.pending.values()):
            stream.end()
        self.pending.clear()
        self.standalone.end()
        if self.event_store is not None:
            self.event_store.forget(self.session_id)

    async def closed_reason(self) -> str:
        return "the HTTP session ended"


class ModernLane(HTTPSessionTransport):
    """A modern lane: a push transport. `feed` hands the request (the POST's parsed
    `Request`, or bytes) to the serving connection at once, and an inline answer is in its
    stream when `feed` returns. What is fed before the connection attaches waits in the inbox."""

    def __init__(self) -> None:
        super().__init__("", None)
        self._receive: Callable[[Any], None] | None = None
        self._chunk_done: Callable[[], None] | None = None
        self._eof: Callable[[], None] | None = None

    def attach(
        self,
        receive: Callable[[Any], None],
        chunk_done: Callable[[], None],
        eof: Callable[[], None],
    ) -> None:
        self._receive, self._chunk_done, self._eof = receive, chunk_done, eof
        inbox = self._inbox
        while inbox:
            item = inbox.popleft()
            if item is None:
                chunk_done()
                eof()
                return
            receive(item)
        chunk_done()
        if self._closed:
            eof()

    def feed(self, body: bytes | Request | None) -> None:  # type: ignore[override]
        if self._closed:
            return
        receive = self._receive
        if receive is None:
            self._inbox.append(body)  # type: ignore[arg-type]
            return
        if body is None:  # EOF, as for a pulled transport
            self._eof()  # type: ignore[misc]
            return
        receive(body)
        self._chunk_done()  # type: ignore[misc]

    def shut(self) -> None:
        if self._closed:
            return
        super().shut()
        if self._eof is not None:
            self._eof()


class HTTPSession:
    __slots__ = ("id", "last_seen", "task", "transport", "version")

    def __init__(self, session_id: str, transport: HTTPSessionTransport, now: float) -> None:
        self.id = session_id
        self.transport = transport
        self.task: asyncio.Task[None] | None = None
        self.last_seen = now
        self.version: str | None = None


class SessionRegistry:
    """Live sessions by id, at most `max_sessions`; idle ones end after `idle_timeout` s."""

    def __init__(
        self, max_sessions: int | None, idle_timeout: float | None, event_store: EventStore | None
    ) -> None:
        self.max_sessions = max_sessions
        self.idle_timeout = idle_timeout
        self.event_store = event_store
        self.sessions: dict[str, HTTPSession] = {}
        self._sweeper: asyncio.Task[None] | None = None

    def __len__(self) -> int:
        return len(self.sessions)

    def full(self) -> bool:
        return self.max_sessions is not None and len(self.sessions) >= self.max_sessions

    def create(self, serve: Serve) -> HTTPSession:
        loop = asyncio.get_running_loop()
        session_id = secrets.token_urlsafe(24)  # URL-safe base64: visible ASCII only
        transport = HTTPSessionTransport(session_id, self.event_store)
        session = HTTPSession(session_id, transport, loop.time())
        session.task = loop.create_task(serve(transport))
        session.task.add_done_callback(lambda _: self._forget(session_id))
        self.sessions[session_id] = session
        self._start_sweeper()
        return session

    def get(self, session_id: str) -> HTTPSession | None:
        session = self.sessions.get(session_id)
        if session is not None:
            session.last_seen = asyncio.get_running_loop().time()
        return session

    async def terminate(self, session_id: str) -> bool:
        session = self.sessions.pop(session_id, None)
        if session is None:
            return False
        session.transport.shut()
        if session.task is not None:
            await asyncio.gather(session.task, return_exceptions=True)
        return True

    async def terminate_all(self) -> None:
        for session_id in list(self.sessions):
            await self.terminate(session_id)
        if self._sweeper is not None:
            self._sweeper.cancel()
            self._sweeper = None

    def _forget(self, session_id: str) -> None:
        session = self.sessions.pop(session_id, None)  # serve ended on its own
        if session is not None:
            session.transport.shut()

    def _start_sweeper(self) -> None:
        if self.idle_timeout is None or self._sweeper is not None:
            return
        self._sweeper = asyncio.get_running_loop().create_task(self._sweep())

    async def _sweep(self) -> None:
        timeout: float = self.idle_timeout  # type: ignore[assignment]
        loop = asyncio.get_running_loop()
        period = max(min(timeout / 4, 30.0), 0.01)
        while self.sessions:
            await asyncio.sleep(period)
            limit = loop.time() - timeout
            for session in list(self.sessions.values()):
                if session.last_seen < limit and not session.transport.busy():
                    await self.terminate(session.id)
        self._sweeper = None


class ModernLanes:
    """The serving connections of 2026-07-28 requests (see the module docstring)."""

    LINGER = 5.0  # s: a spare lane unused this long ends

    def __init__(self, serve: Serve, keep: int = 16, limit: int = 1024) -> None:
        self._serve = serve
        self.keep = keep  # lanes kept however long they idle
        self.limit = limit  # at most this many requests with the same id at once
        self.lanes: list[ModernLane] = []
        self._tasks: dict[ModernLane, asyncio.Task[None]] = {}
        self._used: dict[ModernLane, float] = {}  # when each lane last finished a request
        self._retired: set[ModernLane] = set()

    def __len__(self) -> int:
        return len(self.lanes)

    def pick(self, request_id: RequestId) -> ModernLane | None:
        """A lane where `request_id` is not in flight (a new one when every lane has it);
        None when `limit` lanes all have it."""
        lanes = self.lanes
        for lane in lanes:
            if request_id not in lane.pending:
                return lane
        if len(lanes) >= self.limit:
            return None
        lane = ModernLane()
        task: asyncio.Task[None] = asyncio.ensure_future(self._serve(lane))
        lanes.append(lane)
        self._used[lane] = asyncio.get_running_loop().time()  # a new lane counts as just used
        self._tasks[lane] = task
        task.add_done_callback(lambda _: self._forget(lane))
        return lane

    def cancel(self, lane: ModernLane, stream: ResponseStream) -> None:
        """The client left before the answer: end the stream and cancel its handler."""
        ids = [rid for rid, s in lane.pending.items() if s is stream]
        lane.close_stream(stream)
        for request_id in ids:
            lane.feed(cancellation(request_id))

    def release(self, lane: ModernLane) -> None:
        """A request on `lane` is over. A retired lane with nothing in flight ends; so does the
        last spare lane once unused for LINGER s (one check per request: no timer)."""
        if lane.pending:
            return
        if lane in self._retired:
            self._forget(lane)
            return
        lanes = self.lanes
        if len(lanes) <= self.keep:
            return
        now = asyncio.get_running_loop().time()
        self._used[lane] = now
        last = lanes[-1]
        if not last.pending and now - self._used.get(last, 0.0) > self.LINGER:
            self._forget(last)

    def renew(self) -> None:
        """Serve later requests on fresh lanes (a lane's connection keeps the server
        configuration it started with); the current ones end once nothing is in flight."""
        retired, self.lanes = self.lanes, []
        self._retired.update(retired)
        for lane in retired:
            self.release(lane)

    def busy(self) -> bool:
        return any(lane.pending for lane in self._tasks)

    async def close(self) -> None:
        tasks = list(self._tasks.values())
        for lane in list(self._tasks):
            self._forget(lane)
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    def _forget(self, lane: ModernLane) -> None:
        self._tasks.pop(lane, None)
        self._used.pop(lane, None)
        self._retired.discard(lane)
        if lane in self.lanes:
            self.lanes.remove(lane)
        lane.shut()
