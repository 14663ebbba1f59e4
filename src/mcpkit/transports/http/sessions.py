"""HTTP sessions: a message transport per MCP session, and a bounded registry of them.

`HTTPSessionTransport` is what `Server.serve` runs a session on: `read()` yields the POST
bodies fed to it (parsed once, by the app), and `write()` routes each outgoing message by the
request it relates to -- to that request's `ResponseStream` while the request is open,
otherwise to the session's GET stream (one message goes to one stream); the request's answer
(`Outgoing.final`) ends its stream. The registry mints session ids, caps their number and
ends sessions left idle; ending a session closes its transport, which ends `serve`, and
drops every reference so the memory goes back.

Requests that belong to no session (2026-07-28, stateless endpoints) do not come here: see
`mcpkit.runtime.sessionless`.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections import deque
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, Protocol

from mcpkit.errors import INTERNAL_ERROR
from mcpkit.protocol import Outgoing, RequestId
from mcpkit.protocol.http import STANDALONE_STREAM, event_id
from mcpkit.protocol.jsonrpc import ErrorResponse, Response, encode_error
from mcpkit.protocol.snapshot import SessionChange, SessionSnapshot
from mcpkit.runtime.principal import Principal
from mcpkit.runtime.transport import Incoming, PullTransport
from mcpkit.stores.tasks import StoreUnavailable
from mcpkit.transports.http.event_store import EventStore
from mcpkit.transports.http.streams import ResponseStream


class Serve(Protocol):
    """Runs one session on a transport until it closes; `restored`: a session agreed earlier
    (on another worker), served without a handshake (`Server.serve`)."""

    def __call__(
        self, transport: PullTransport, restored: SessionSnapshot | None = None, /
    ) -> Coroutine[Any, Any, None]: ...


# The empty set a session's only copy shares for what only copies among several track (never
# added to: `write` and `abandon` give a copy its own set first).
_NONE: set[Any] = set()
_NO_HOLDS: dict[Any, Any] = {}  # likewise (`changed` gives a copy its own dict first)
_RELEASING: set[asyncio.Future[None]] = set()  # held answers on their way (kept alive)
logger = logging.getLogger("mcpkit.http")


class HTTPSessionTransport(PullTransport):
    """The session side of Streamable HTTP, for one MCP session (or one HTTP+SSE session).
    `principal`: who opened the session, when the endpoint authenticates. `numbering`: where
    its stream and event numbers start (a session served by several workers gives each copy
    its own range, so ids never collide in a shared event store)."""

    def __init__(
        self,
        session_id: str,
        event_store: EventStore | None,
        principal: Principal | None = None,
        numbering: int = 0,
    ) -> None:
        self.session_id = session_id
        self.event_store = event_store
        self.principal = principal
        self.pending: dict[RequestId, ResponseStream] = {}
        self.standalone = ResponseStream(STANDALONE_STREAM, endless=True)
        self.standalone.attached = False
        self._inbox: deque[Incoming | None] = deque()
        self._reader: asyncio.Future[None] | None = None
        self._streams = numbering
        self._events = numbering
        self._closed = False
        self.forget_events = True  # shut() drops the session's stored events
        # A session served by several workers (RedisState): the other copies, through the
        # workers' bus. Unset, this is the session's only copy.
        self.relay: Relay | None = None
        # Where the session's GET stream is open, or was open last: the copy that sends, or
        # keeps for a resume, what goes on it. The only copy always is.
        self.home = True
        # Only a copy among several tracks these (a session's only copy keeps no sets: W7).
        self.asked: set[RequestId] = _NONE  # our requests the client has not answered
        self._silent: set[RequestId] = _NONE  # requests `abandon` answered: answers dropped
        # A copy among several: answers held until the changes they made are shared, and
        # the changes made by notifications (`changed`, `settle`).
        self._holds: dict[ResponseStream, list[asyncio.Future[None]]] = _NO_HOLDS
        self._sharing: list[asyncio.Future[None]] | None = None
        self._drained: asyncio.Future[None] | None = None

    # -- fed by the app ----------------------------------------------------------------------

    def feed(self, message: Incoming | None) -> None:
        if self._closed:
            return
        if self.relay is not None and message is not None:
            message = self._keep_ours(message)
            if message is None:
                return
        self._inbox.append(message)
        reader = self._reader
        if reader is not None and not reader.done():
            reader.set_result(None)

    def _keep_ours(self, message: Incoming) -> Incoming | None:
        """The client's answers to requests another copy made go to that copy."""
        relay = self.relay
        assert relay is not None
        if type(message) is list:
            kept = [item for item in message if self._ours(item, relay)]
            return kept or None
        return message if self._ours(message, relay) else None

    def _ours(self, item: object, relay: Relay) -> bool:
        if type(item) is not Response and type(item) is not ErrorResponse:
            return True
        request_id = item.id
        if request_id in self.asked:
            self.asked.discard(request_id)
            return True
        relay.answer_elsewhere(self.session_id, item)
        return False

    def take_answer(self, item: Response | ErrorResponse) -> bool:
        """An answer another worker received: taken when it answers a request of ours."""
        if item.id not in self.asked or self._closed:
            return False
        self.asked.discard(item.id)
        self._inbox.append(item)
        reader = self._reader
        if reader is not None and not reader.done():
            reader.set_result(None)
        return True

    def apply(self, change: SessionChange) -> None:
        """A change another copy made to the session's state, made to this copy's (by the
        session running here: no message, nothing served)."""
        if self.apply_change is not None and not self._closed:
            self.apply_change(change)

    def changed(self, change: SessionChange, related: RequestId | None) -> None:
        """The server changed the session's state: the other copies are told through the
        relay, before the answer to `related` leaves (held until then) or, with none, before
        the POST that made it is answered (`settle`). The only copy has nothing to tell."""
        relay = self.relay
        if relay is None:
            return
        sharing = asyncio.ensure_future(relay.share(self.session_id, change))
        sharing.add_done_callback(_report)
        stream = self.pending.get(related) if related is not None else None
        if stream is None:
            if related is None:  # made by a notification: its POST waits (`settle`)
                if self._sharing is None:
                    self._sharing = []
                self._sharing.append(sharing)
            return
        if not self._holds:
            self._holds = {}
        self._holds.setdefault(stream, []).append(sharing)

    async def settle(self) -> None:
        """Until the session has read what was fed to it, and what it changed is shared
        (a copy among several: a notification's change leaves before its 202)."""
        if self.relay is None:
            return
        while self._inbox and not self._closed:
            drained = self._drained
            if drained is None or drained.done():  # one future for every POST waiting
                drained = self._drained = asyncio.get_running_loop().create_future()
            await drained  # the session handles what it read before we wake
        sharing, self._sharing = self._sharing or [], None
        await asyncio.gather(*sharing)

    def open_home(self) -> None:
        """The session's GET stream opened here: this copy sends (or keeps) what goes on it."""
        self.home = True
        if self.relay is not None:
            self.relay.opened_here(self.session_id)

    def open_stream(self, request_ids: tuple[RequestId, ...]) -> ResponseStream:
        self._streams += 1
        stream = ResponseStream(str(self._streams))
        for request_id in request_ids:
            self.pending[request_id] = stream
        return stream

    def end_stream(self, stream: ResponseStream) -> None:
        """The request was cancelled: end its response; a late answer is dropped."""
        for request_id in [rid for rid, s in self.pending.items() if s is stream]:
            del self.pending[request_id]
        stream.end()

    def abandon(self, code: int, message: str) -> None:
        """The server stops before the open requests are answered: each gets the error
        (`code`, `message`) as its answer, on its response or kept for a resume; what its
        handler still sends about it is dropped."""
        if self.pending and self._silent is _NONE:
            self._silent = set()
        for request_id, stream in list(self.pending.items()):
            self._silent.add(request_id)
            error = encode_error(request_id, code, message)
            self._deliver(stream, Outgoing(error, request_id, True, code))
        self.pending.clear()

    def close_stream(self, request_id: RequestId) -> bool:
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
        eid = self._mint(stream_id)
        store.append(self.session_id, eid, data)
        return eid

    def _mint(self, stream_id: str) -> str:
        self._events += 1
        return event_id(stream_id, self._events)

    # -- PullTransport -------------------------------------------------------------------------

    async def read(self) -> Incoming | None:
        inbox = self._inbox
        while not inbox:
            if self._closed:
                return None
            self._reader = asyncio.get_running_loop().create_future()
            try:
                await self._reader
            finally:
                self._reader = None
        message = inbox.popleft()
        drained = self._drained
        if drained is not None and not inbox and not drained.done():
            drained.set_result(None)
        return message

    def write(self, messages: list[Outgoing]) -> None:
        pending = self.pending
        for out in messages:
            if out.id is not None and self.relay is not None:
                if self.asked is _NONE:
                    self.asked = set()
                self.asked.add(out.id)
            related = out.related
            stream = pending.get(related) if related is not None else None
            if stream is None:
                if related is not None and related in self._silent:
                    if out.final:
                        self._silent.discard(related)
                    continue
                self._deliver(self.standalone, out)
                continue
            if out.final:  # the answer: the stream (every request of its batch) is done
                for request_id in [rid for rid, s in pending.items() if s is stream]:
                    del pending[request_id]
                if self._holds and stream in self._holds:
                    self._hold(stream, out)
                    continue
            self._deliver(stream, out)

    def _hold(self, stream: ResponseStream, out: Outgoing) -> None:
        """The answer of a request that changed the session's state leaves once the other
        copies know; if they cannot be told, the client gets an error instead."""
        sharing = self._holds.pop(stream)

        async def release() -> None:
            try:
                await asyncio.gather(*sharing)
            except Exception as failure:  # logged by `_report`
                said = failure if isinstance(failure, StoreUnavailable) else "a store failed"
                related = out.related
                error = encode_error(related, INTERNAL_ERROR, f"Internal error: {said}")
                self._deliver(stream, Outgoing(error, related, True, INTERNAL_ERROR))
            else:
                self._deliver(stream, out)

        task = asyncio.ensure_future(release())
        _RELEASING.add(task)
        task.add_done_callback(_RELEASING.discard)

    def divert(self, out: Outgoing) -> None:
        """A related message that cannot travel on its request's JSON answer."""
        self._deliver(self.standalone, out)

    def _deliver(self, stream: ResponseStream, out: Outgoing) -> None:
        if stream.attached:
            stream.push(out)
        elif stream is self.standalone and not self.home:
            self._send_home(out)
        else:  # nobody is listening: keep it for a resume, or drop it
            self.record(stream.stream_id, out.data)

    def _send_home(self, out: Outgoing) -> None:
        """A message for the GET stream, which another copy serves, or served before it
        stopped: kept for a resume whether or not a copy holds that stream now, and sent
        there. What the server tells every client (list_changed, resources/updated) that
        copy's server tells it too: kept by the worker where it was made, not sent."""
        relay = self.relay
        if relay is None:
            return
        fanned = out.fanned
        if self.event_store is not None:
            relay.keep(self.session_id, self._mint(self.standalone.stream_id), out.data, fanned)
        if not fanned:
            relay.to_home(self.session_id, out)

    def deliver_home(self, out: Outgoing) -> None:
        """A message for the GET stream made by another copy: sent, or kept for a resume."""
        if self.standalone.attached:
            self.standalone.push(out)
        elif self.home:
            self.record(self.standalone.stream_id, out.data)

    async def close(self) -> None:
        self.shut()

    def shut(self) -> None:
        """Synchronous close: the reader sees EOF, open responses end."""
        if self._closed:
            return
        self._closed = True
        self._inbox.clear()
        self._inbox.append(None)
        if self._drained is not None and not self._drained.done():
            self._drained.set_result(None)
        if self._reader is not None and not self._reader.done():
            self._reader.set_result(None)
        for stream in set(self.pending.values()):
            stream.end()
        self.pending.clear()
        self.standalone.end()
        if self.event_store is not None and self.forget_events:
            self.event_store.forget(self.session_id)

    async def closed_reason(self) -> str:
        return "the HTTP session ended"


def _report(sharing: asyncio.Future[None]) -> None:
    """One log line for a change the other copies could not be told of."""
    failure = None if sharing.cancelled() else sharing.exception()
    if failure is not None:
        logger.warning("a session change was not shared with the other workers: %s", failure)


class Relay(Protocol):
    """How a copy of a session reaches the session's other copies (on other workers)."""

    def answer_elsewhere(self, session_id: str, item: Response | ErrorResponse) -> None:
        """The client answered a request another copy made."""
        ...

    def to_home(self, session_id: str, out: Outgoing) -> None:
        """A message for the GET stream, open (or kept) on another copy."""
        ...

    def keep(self, session_id: str, event_id: str, data: bytes, fanned: bool) -> None:
        """A message for the GET stream written on this copy, which does not hold that
        stream: stored for a resume (`fanned`: every worker's server wrote it, one keeps it)."""
        ...

    def opened_here(self, session_id: str) -> None:
        """The GET stream opened on this copy."""
        ...

    async def share(self, session_id: str, change: SessionChange) -> None:
        """The server changed the session's state on this copy: kept, and the other copies
        told. Raises StoreUnavailable when that fails."""
        ...


class HTTPSession:
    __slots__ = ("id", "last_seen", "task", "transport", "version")

    def __init__(self, session_id: str, transport: HTTPSessionTransport, now: float) -> None:
        self.id = session_id
        self.transport = transport
        self.task: asyncio.Task[None] | None = None
        self.last_seen = now
        self.version: str | None = None


@dataclass(frozen=True, slots=True)
class SessionOptions:
    """Handshake-era sessions: at most `max_sessions` (503 past it; None: no cap), each ended
    after `idle_timeout` s with no request open (None: never)."""

    max_sessions: int | None = 10_000
    idle_timeout: float | None = 1800.0


class SessionRegistry:
    """Live sessions by id, at most `max_sessions`; idle ones end after `idle_timeout` s."""

    def __init__(
        self,
        max_sessions: int | None,
        idle_timeout: float | None,
        event_store: EventStore | None,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_sessions = max_sessions
        self.idle_timeout = idle_timeout
        self.event_store = event_store
        self.clock = clock  # when a session was last used, and when it is idle
        self.sessions: dict[str, HTTPSession] = {}
        self._sweeper: asyncio.Task[None] | None = None

    def __len__(self) -> int:
        return len(self.sessions)

    def held(self) -> list[HTTPSession]:
        return list(self.sessions.values())

    def full(self) -> bool:
        return self.max_sessions is not None and len(self.sessions) >= self.max_sessions

    async def create(self, serve: Serve, principal: Principal | None = None) -> HTTPSession | None:
        if self.full():
            return None
        return self.start(serve, principal)

    def start(self, serve: Serve, principal: Principal | None = None) -> HTTPSession:
        """A new session, served from now on (no cap checked)."""
        loop = asyncio.get_running_loop()
        session_id = secrets.token_urlsafe(24)  # URL-safe base64: visible ASCII only
        transport = HTTPSessionTransport(session_id, self.event_store, principal)
        session = HTTPSession(session_id, transport, self.clock())
        session.task = loop.create_task(serve(transport))
        session.task.add_done_callback(lambda _: self._forget(session_id))
        self.sessions[session_id] = session
        self._start_sweeper()
        return session

    async def get(
        self, session_id: str, principal: Principal | None = None, serve: Serve | None = None
    ) -> HTTPSession | None:
        session = self.sessions.get(session_id)
        if session is None or not same_principal(session.transport.principal, principal):
            return None  # another principal's session does not exist
        session.last_seen = self.clock()
        return session

    async def established(self, session: HTTPSession, snapshot: SessionSnapshot) -> None:
        """Its `initialize` was answered: kept in this process, nothing to write."""

    async def discard(self, session_id: str) -> None:
        self.sessions.pop(session_id, None)

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

    async def follow(self, session: HTTPSession, last_event_id: str) -> None:
        """Every request of a session is served here: one not open here is answered."""

    def _forget(self, session_id: str) -> None:
        session = self.sessions.pop(session_id, None)  # serve ended on its own
        if session is not None:
            session.transport.shut()

    def _start_sweeper(self) -> None:
        if self.idle_timeout is None or self._sweeper is not None:
            return
        self._sweeper = asyncio.get_running_loop().create_task(self._sweep())

    async def _sweep(self) -> None:
        timeout = self.idle_timeout or 0.0
        period = max(min(timeout / 4, 30.0), 0.01)
        while self.sessions:
            await asyncio.sleep(period)
            await self.end_idle()
        self._sweeper = None

    async def end_idle(self) -> int:
        """End the sessions idle (no request open) for `idle_timeout` s by `clock`; how many.
        The sweeper runs it every quarter of the timeout (at most every 30 s)."""
        if self.idle_timeout is None:
            return 0
        limit = self.clock() - self.idle_timeout
        idle = [
            session.id
            for session in self.sessions.values()
            if session.last_seen < limit and not session.transport.busy()
        ]
        for session_id in idle:
            await self.terminate(session_id)
        return len(idle)


def same_principal(owner: Principal | None, caller: Principal | None) -> bool:
    """Whether `caller` may use what `owner` opened (no authorization: both None)."""
    if owner is None or caller is None:
        return owner is caller
    return owner.key == caller.key
