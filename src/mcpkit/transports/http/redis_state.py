"""`RedisState`: the HTTP app's sessions and SSE events in Redis, shared by every worker.

    app = server.http_app(state=RedisState("redis://127.0.0.1:6379/0"))

Any worker serves any request of a handshake-era session: the session's record (what its
`initialize` agreed, its log level and subscriptions, who owns it) lives in Redis
(`RedisSessionStore`), and its SSE events too (`RedisEventStore`), so no sticky sessions are
needed in front of the workers.

A worker's sessions (`RedisSessions`) are a cache over Redis. A request naming a session this
worker does not hold rebuilds it from its record (`Server.serve(restored=...)`, one round
trip); one it holds is checked and refreshed in Redis (one round trip, `touch`), and rebuilt
when another worker changed the record since (its `gen` moved). DELETE removes the record:
every worker's copy then answers 404 and is dropped. A copy unused here for `cache_idle` s is
dropped (the record stays), so idle sessions cost workers no memory. The cap
(`max_sessions`) and the idle timeout hold across workers: Redis counts and expires them.

The workers talk over a Redis channel (`RedisBus`, stores/redis_bus.py; channels.py names
what crosses it): a client's answer to a request another
worker's copy made (sampling, elicitation, roots) goes to that copy; a message for the GET
stream goes to the copy where it is open (the session's "home"); what a server tells every
client (list_changed, resources/updated, task status) every worker's server tells its own
(`Server.deliver`). See docs/scale-out.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

from mcpkit.protocol import Outgoing
from mcpkit.protocol.http import STANDALONE_STREAM, event_id
from mcpkit.protocol.jsonrpc import (
    ErrorResponse,
    Response,
    dumps,
    encode_notification,
    encode_result,
    parse,
)
from mcpkit.protocol.snapshot import (
    HandshakeEnded,
    SessionChange,
    SessionSnapshot,
    changes_between,
)
from mcpkit.runtime.fanout import FanOutEvent, FanOutTarget
from mcpkit.runtime.principal import Principal
from mcpkit.stores.bus import Bus
from mcpkit.stores.events import EventLog
from mcpkit.stores.redis_bus import RedisBus
from mcpkit.stores.redis_client import StateUnavailable, connect
from mcpkit.stores.redis_events import RedisEventStore
from mcpkit.stores.redis_sessions import (
    RedisSessionStore,
    owner_key,
)
from mcpkit.transports.http.channels import (
    ANSWERS,
    CHANGED,
    DELETED,
    FAN_OUT,
    HOME_MOVED,
    TO_HOME,
    Change,
    ForHome,
    SessionData,
)
from mcpkit.transports.http.follow import Following, follow_stream
from mcpkit.transports.http.sessions import (
    HTTPSession,
    HTTPSessionTransport,
    Serve,
    SessionOptions,
    same_principal,
)
from mcpkit.transports.http.state import Followed

__all__ = ["RedisSessions", "RedisState"]

logger = logging.getLogger("mcpkit.http")
RESOURCE_UPDATED = "notifications/resources/updated"

_NUMBERING = 10**16  # a copy numbers its streams and events from a random base above this


class RedisState:
    """Sessions and events in the Redis at `url` (or the `redis.asyncio.Redis` `client`).
    `prefix` namespaces the keys (one per service; every worker of it the same); at most
    `max_events` SSE events kept per session; a worker drops its copy of a session unused for
    `cache_idle` s by `clock` (seconds; intervals only). The client made from `url` waits at
    most `timeout` s to connect and for each reply (see stores/redis_client.py): a request
    meeting a failed Redis gets 503 instead of hanging. Raises ImportError (naming the
    extra) without the `redis` package."""

    shared = True

    def __init__(
        self,
        url: str | None = None,
        *,
        client: Any = None,
        prefix: str = "mcpkit:http:",
        max_events: int = 1000,
        cache_idle: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
        timeout: float = 2.0,
    ) -> None:
        self._owns_client = client is None
        if client is None:
            client = connect(url or "redis://127.0.0.1:6379/0", timeout=timeout)
        self.client = client
        self.prefix = prefix
        self.cache_idle = cache_idle
        self.clock = clock
        self.timeout = timeout
        self._events = RedisEventStore(client, prefix=prefix, max_events=max_events)
        self.bus = RedisBus(client, prefix)
        self.bus.before = self._events.flush
        self._target: FanOutTarget | None = None
        self._sessions: RedisSessions | None = None
        self._fanning: deque[FanOutEvent] = deque()  # fan-out events not yet told
        self._fanner: asyncio.Task[None] | None = None
        self._registered = False  # FAN_OUT, at the first open

    @property
    def event_store(self) -> RedisEventStore:
        return self._events

    async def open(self, server: FanOutTarget | None) -> None:
        """The app starts: join the other workers' channel; `server`'s fan-out goes through
        it. Raises StoreUnavailable when Redis cannot be reached."""
        self._target = server
        if not self._registered:
            self.bus.register(FAN_OUT, self._fanned_in)
            self._registered = True
        await self.bus.start()
        if server is not None:
            server.fanout = self

    async def reachable(self) -> None:
        """The readiness probe's check (health.py): a PING. Raises what redis-py raises when
        Redis does not answer (each wait bounded by `timeout`)."""
        await self.client.ping()

    def publish(self, event: FanOutEvent) -> None:
        """Tell the other workers, in order, after what this worker keeps of it for the
        sessions whose GET stream another worker holds (or held) is stored (`bus.before`):
        what its copies write (`RedisSessions.originated`), and a resource update for the
        sessions it holds no copy of (`RedisSessions.keep_updated`)."""
        if self._sessions is not None:
            self._sessions.originated()
        self._fanning.append(event)
        if self._fanner is None:
            self._fanner = asyncio.get_running_loop().create_task(self._fan_out())

    async def _fan_out(self) -> None:
        try:
            while self._fanning:
                event = self._fanning.popleft()
                uri = event[1] if event[0] == "resource_updated" else None
                # (a URI template names no set of subscribers: not looked up)
                if self._sessions is not None and type(uri) is str and "{" not in uri:
                    try:
                        await self._sessions.keep_updated(uri)
                    except StateUnavailable:  # the others are still told (the bus retries)
                        logger.warning("could not store a resource update for a resume")
                self.bus.publish(FAN_OUT, event, stored_first=True)
        finally:
            self._fanner = None

    def _fanned_in(self, event: FanOutEvent) -> None:
        if self._target is not None:
            self._target.deliver(event)

    def sessions(self, options: SessionOptions) -> RedisSessions:
        """The app's sessions. Raises ValueError when another app has them already (its
        channels on the workers' bus are this state's)."""
        if self._sessions is not None:
            raise ValueError("a RedisState serves one app; make one for each")
        store = RedisSessionStore(
            self.client,
            prefix=self.prefix,
            ttl=options.idle_timeout,
            max_sessions=options.max_sessions,
        )
        self._events.ttl = options.idle_timeout  # a session's events live as long as it
        sessions = RedisSessions(
            store, self._events, options.idle_timeout, self.cache_idle, self.bus, clock=self.clock
        )
        sessions.on_stop = self._stop
        self._sessions = sessions
        # a blocking read of a followed stream must answer before the client's timeout
        sessions.following = Following(block_ms=max(10, min(1000, int(self.timeout * 500))))
        return sessions

    async def _stop(self) -> None:
        if self._fanner is not None:
            await asyncio.gather(self._fanner, return_exceptions=True)
        await self._events.flush()
        await self.bus.stop()
        if self._target is not None and self._target.fanout is self:
            self._target.fanout = None
        if self._owns_client:  # the app stops: its connections close (a new start reopens)
            await self.client.aclose()


class _Copy:
    """This worker's copy of a session: the record `gen` it is up to date with, and the
    record's snapshot as of then (to bring it up to date when another worker changed it)."""

    __slots__ = ("checked", "gen", "ready", "restored", "seen", "session", "used")

    def __init__(self, session: HTTPSession, gen: int, restored: SessionSnapshot | None) -> None:
        self.session = session
        self.gen = gen
        self.restored = restored is not None  # rebuilt from the record, not made here
        self.ready = self.restored  # the client's `initialized` seen (or implied)
        self.seen = restored  # None until this copy's initialize is answered
        self.checked = session.last_seen  # when Redis last confirmed it (made, touched, swept)
        self.used = False  # served a request since: its expiry is refreshed at the next sweep


class RedisSessions:
    """The `Sessions` of a worker sharing them through Redis (see the module docstring)."""

    def __init__(
        self,
        store: RedisSessionStore,
        events: EventLog,
        idle_timeout: float | None,
        cache_idle: float,
        bus: Bus,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self.bus = bus
        self.following = Following()  # how streams open on other workers are followed
        bus.register(ANSWERS, self._answered)
        bus.register(CHANGED, self._changed_elsewhere)
        bus.register(DELETED, self._deleted_elsewhere)
        bus.register(TO_HOME, self._for_home)
        bus.register(HOME_MOVED, self._home_moved)
        self.clock = clock  # when a copy was last used here, and when it is unused
        self.events = events
        self.idle_timeout = idle_timeout
        self.cache_idle = cache_idle if idle_timeout is None else min(cache_idle, idle_timeout)
        # A copy checked in Redis this recently is served without asking (the sweeper checks
        # every copy this often): a DELETE or an expiry elsewhere is seen within it, a change
        # at once through the bus (or within it, from the record).
        self.trusted = max(min(self.cache_idle / 4, 1.0), 0.05)
        if idle_timeout is not None:
            self.trusted = max(min(self.trusted, idle_timeout / 4), 0.05)
        self.copies: dict[str, _Copy] = {}
        # Not 0: this worker's server is telling every worker's clients something (a list
        # changed, a resource was updated): what its copies write of it now is made here.
        self.originating = 0
        self._made = _NUMBERING + secrets.randbelow(_NUMBERING)  # ids of what `keep_updated` keeps
        self._sweeper: asyncio.Task[None] | None = None
        self.on_stop: Callable[[], Awaitable[None]] | None = None

    def __len__(self) -> int:
        return len(self.copies)

    def held(self) -> list[HTTPSession]:
        return [copy.session for copy in self.copies.values()]

    async def create(self, serve: Serve, principal: Principal | None = None) -> HTTPSession | None:
        session_id = secrets.token_urlsafe(24)  # URL-safe base64: visible ASCII only
        if not await self.store.reserve(session_id, _owner(principal)):
            return None
        return self._start(serve, session_id, principal, None, 0)

    async def get(
        self, session_id: str, principal: Principal | None = None, serve: Serve | None = None
    ) -> HTTPSession | None:
        copy = self.copies.get(session_id)
        if copy is not None:
            session = copy.session
            if not same_principal(session.transport.principal, principal):
                return None  # another principal's session does not exist
            now = self.clock()
            if now - copy.checked < self.trusted:  # the hot path: no round trip
                copy.used = True
                session.last_seen = now
                return session
            gen = await self.store.touch(session_id)  # not checked lately: one round trip
            if gen is not None and gen != copy.gen and session.version is not None:
                gen = await self._refresh_from_record(copy, principal)
            if gen is None:  # deleted or expired, on whichever worker
                self._drop(session_id, forget=False)
                return None
            copy.checked = session.last_seen = now
            return session
        stored = await self.store.load(session_id, _owner(principal))
        if stored is None or stored.snapshot is None or serve is None:
            return None
        return self._start(serve, session_id, principal, stored.snapshot, stored.gen)

    async def _refresh_from_record(self, copy: _Copy, principal: Principal | None) -> int | None:
        """Changed elsewhere, and the bus did not tell us: read the record and apply what
        changed. The record's `gen`; None when it is gone."""
        stored = await self.store.load(copy.session.id, _owner(principal))
        if stored is None or stored.snapshot is None:
            return None
        _catch_up(copy, stored.snapshot, stored.gen)
        return stored.gen

    async def established(self, session: HTTPSession, snapshot: SessionSnapshot) -> None:
        gen = await self.store.save(session.id, snapshot)
        copy = self.copies.get(session.id)
        if copy is not None and gen is not None:
            copy.gen, copy.seen = gen, snapshot

    async def share(self, session_id: str, change: SessionChange) -> None:
        """A copy's server changed the session's state (`Relay.share`): the record changes
        (`gen` moves) and the other workers' copies are told, as data. The copy that
        answered initialize only notes the handshake's end: nobody else waits for it (a copy
        elsewhere was restored past it)."""
        copy = self.copies.get(session_id)
        if type(change) is HandshakeEnded and (copy is None or not copy.restored):
            if copy is not None:
                copy.ready = True
            return
        gen = await self.store.change(session_id, change)
        if copy is None or gen is None:
            return
        if copy.seen is not None:
            copy.seen = copy.seen.apply(change)
        copy.gen = gen
        self.bus.publish(CHANGED, Change(session_id, gen, change))
        await self.bus.flush()  # the others hear it before the client's next request

    async def discard(self, session_id: str) -> None:
        self.copies.pop(session_id, None)
        await self.store.delete(session_id)

    async def terminate(self, session_id: str) -> bool:
        """DELETE: the record goes (every worker's copy then answers 404), then this copy;
        the other workers drop theirs when the bus tells them (else at their next check)."""
        await self.store.delete(session_id)
        self.bus.publish(DELETED, session_id)
        copy = self.copies.pop(session_id, None)
        if copy is None:
            return False
        await _end(copy.session, forget=True)
        return True

    async def terminate_all(self) -> None:
        """This worker stops: its copies go, the sessions stay for the other workers."""
        for session_id in list(self.copies):
            copy = self.copies.pop(session_id)
            await _end(copy.session, forget=False)
        if self._sweeper is not None:
            self._sweeper.cancel()
            self._sweeper = None
        await self.events.flush()
        if self.on_stop is not None:
            await self.on_stop()

    # -- copies ------------------------------------------------------------------------------

    def _start(
        self,
        serve: Serve,
        session_id: str,
        principal: Principal | None,
        restored: SessionSnapshot | None,
        gen: int,
    ) -> HTTPSession:
        made = self.copies.get(session_id)
        if made is not None:  # by a request that read the record at the same time: one copy
            return made.session
        loop = asyncio.get_running_loop()
        numbering = _NUMBERING + secrets.randbelow(_NUMBERING)
        transport = HTTPSessionTransport(session_id, self.events, principal, numbering)
        transport.relay = self
        transport.home = False  # until its GET stream opens here
        session = HTTPSession(session_id, transport, self.clock())
        session.version = None if restored is None else restored.version
        session.task = loop.create_task(serve(transport, restored))
        self.copies[session_id] = _Copy(session, gen, restored)
        session.task.add_done_callback(lambda _: self._ended(session))
        self._start_sweeper()
        return session

    def _drop(self, session_id: str, *, forget: bool) -> None:
        copy = self.copies.pop(session_id, None)
        if copy is not None:
            copy.session.transport.forget_events = forget
            copy.session.transport.shut()

    def _ended(self, session: HTTPSession) -> None:
        copy = self.copies.get(session.id)
        if copy is not None and copy.session is session:  # serve ended on its own
            del self.copies[session.id]
            session.transport.forget_events = False
            session.transport.shut()

    # -- a stream still open on another worker ----------------------------------------------

    async def follow(self, session: HTTPSession, last_event_id: str) -> Followed | None:
        """A lost POST stream resumed here while its request may still run elsewhere (see
        `follow.follow_stream`)."""
        return await follow_stream(self.events, session.id, last_event_id, self.following)

    # -- the other copies (Relay), through the bus --------------------------------------------

    def answer_elsewhere(self, session_id: str, item: Response | ErrorResponse) -> None:
        self.bus.publish(ANSWERS, SessionData(session_id, _answer_bytes(item).decode()))

    def to_home(self, session_id: str, out: Outgoing) -> None:
        message = ForHome(session_id, out.data.decode(), out.method)
        self.bus.publish(TO_HOME, message, stored_first=True)

    def keep(self, session_id: str, event_id: str, data: bytes, fanned: bool) -> None:
        if not fanned or self.originating:  # else: the worker where it was made keeps it
            self.events.made(session_id, event_id, data)

    async def keep_updated(self, uri: str) -> None:
        """This worker's server tells every worker's clients that `uri` changed: stored for
        the sessions subscribed to it that this worker holds no copy of (those it holds keep
        it as they write it), whether or not a worker holds their GET stream. Raises
        StateUnavailable when Redis fails."""
        data = encode_notification(RESOURCE_UPDATED, {"uri": uri})
        for session_id in await self.store.subscribers(uri):
            if session_id not in self.copies:
                self._made += 1
                self.events.made(session_id, event_id(STANDALONE_STREAM, self._made), data)

    def originated(self) -> None:
        """This worker's server fans an event out: its sessions' writes of it are made here.
        Each session writes in a callback (`Session._schedule_flush`), maybe scheduled after
        this call (the server tells its own sessions after): the flag ends two hops later,
        behind every callback scheduled meanwhile."""
        self.originating += 1
        loop = asyncio.get_running_loop()
        loop.call_soon(loop.call_soon, self._originated_done)

    def _originated_done(self) -> None:
        self.originating -= 1

    def opened_here(self, session_id: str) -> None:
        self.bus.publish(HOME_MOVED, session_id)

    def _copies_of(self, session_id: str) -> list[HTTPSessionTransport]:
        copy = self.copies.get(session_id)
        return [] if copy is None else [copy.session.transport]

    def _changed_elsewhere(self, message: Change) -> None:
        """Another worker's copy changed the session's state: this copy makes the change
        too, when it is up to date but for it (else the record brings it up to date at its
        next request)."""
        copy = self.copies.get(message.session_id)
        if copy is None or copy.gen != message.gen - 1:
            return
        _apply(copy, message.change)
        copy.gen = message.gen

    def _answered(self, message: SessionData) -> None:
        item = parse(message.data)
        if type(item) is Response or type(item) is ErrorResponse:
            for transport in self._copies_of(message.session_id):
                if transport.take_answer(item):
                    return

    def _for_home(self, message: ForHome) -> None:
        out = Outgoing(message.data.encode(), method=message.method)
        for transport in self._copies_of(message.session_id):
            transport.deliver_home(out)

    def _deleted_elsewhere(self, session_id: str) -> None:
        self._drop(session_id, forget=False)

    def _home_moved(self, session_id: str) -> None:
        for transport in self._copies_of(session_id):
            transport.home = False

    # -- the sweeper -------------------------------------------------------------------------

    def _start_sweeper(self) -> None:
        if self._sweeper is None:
            self._sweeper = asyncio.get_running_loop().create_task(self._sweep())

    async def _sweep(self) -> None:
        """Every `trusted` s: check every copy in Redis (one round trip, see `sweep_once`)."""
        while self.copies:
            await asyncio.sleep(self.trusted)
            with contextlib.suppress(Exception):  # Redis away for a moment: next period
                await self.sweep_once()
        self._sweeper = None

    async def sweep_once(self) -> None:
        """Drop the copies unused here for `cache_idle` s, then check the others in Redis in
        one round trip: those whose record is gone (deleted elsewhere, expired) are dropped,
        those changed elsewhere catch up, and the records of those used since the last check
        or busy (an open request or stream is not idleness) have their expiry refreshed.
        Raises StateUnavailable when Redis fails."""
        now = self.clock()
        limit = now - self.cache_idle
        for session_id, copy in list(self.copies.items()):
            session = copy.session
            if session.last_seen < limit and not session.transport.busy():
                self._drop(session_id, forget=False)
        copies = dict(self.copies)
        refresh = [i for i, c in copies.items() if c.used or c.session.transport.busy()]
        gens = await self.store.check(list(copies), refresh)
        for session_id, copy in copies.items():
            gen = gens.get(session_id)
            if gen is not None and gen != copy.gen and copy.session.version is not None:
                gen = await self._refresh_from_record(copy, copy.session.transport.principal)
            if gen is None:
                self._drop(session_id, forget=False)
                continue
            copy.used = False
            copy.checked = now


def _apply(copy: _Copy, change: SessionChange) -> None:
    """Make on `copy` a change another copy made (the handshake's end only once)."""
    if type(change) is HandshakeEnded:
        if copy.ready:
            return
        copy.ready = True
    elif copy.seen is not None:
        copy.seen = copy.seen.apply(change)
    copy.session.transport.apply(change)


def _catch_up(copy: _Copy, snapshot: SessionSnapshot, gen: int) -> None:
    """Bring `copy` up to the record (`snapshot` at `gen`): what changed since it was made."""
    _apply(copy, HandshakeEnded())  # the record moved on: the handshake ended elsewhere
    for change in changes_between(copy.seen or snapshot, snapshot):
        _apply(copy, change)
    copy.seen = snapshot
    copy.gen = gen


def _answer_bytes(item: Response | ErrorResponse) -> bytes:
    if type(item) is Response:
        return encode_result(item.id, item.result)
    return dumps({"jsonrpc": "2.0", "id": item.id, "error": item.error})


def _owner(principal: Principal | None) -> str:
    return owner_key(None if principal is None else principal.key)


async def _end(session: HTTPSession, *, forget: bool) -> None:
    session.transport.forget_events = forget
    session.transport.shut()
    if session.task is not None:
        await asyncio.gather(session.task, return_exceptions=True)
