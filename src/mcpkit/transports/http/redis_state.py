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

Not yet across workers (see docs/scale-out.md): an unrelated notification made on one worker
reaches only a stream open on that worker; a server-to-client request (sampling, elicitation,
roots) is refused at once with a clear error (`NOT_ROUTED`), since the client's answer may
reach another worker.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import Any

from mcpkit._extras import optional_dependency
from mcpkit.protocol.snapshot import SessionSnapshot
from mcpkit.runtime.principal import Principal
from mcpkit.stores.redis_events import RedisEventStore
from mcpkit.stores.redis_sessions import (
    RedisSessionStore,
    StoredSession,
    owner_key,
    subscription_field,
)
from mcpkit.transports.http.sessions import (
    HTTPSession,
    HTTPSessionTransport,
    Serve,
    SessionOptions,
    same_principal,
)

__all__ = ["RedisSessions", "RedisState"]

NOT_ROUTED = (
    "server-to-client requests (sampling, elicitation, roots) are not yet supported with "
    "RedisState: the client's answer may reach another worker (see docs/scale-out.md)"
)
_NUMBERING = 10**16  # a copy numbers its streams and events from a random base above this


class RedisState:
    """Sessions and events in the Redis at `url` (or the `redis.asyncio.Redis` `client`).
    `prefix` namespaces the keys (one per service; every worker of it the same); at most
    `max_events` SSE events kept per session; a worker drops its copy of a session unused for
    `cache_idle` s by `clock` (seconds; intervals only). Raises ImportError (naming the
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
    ) -> None:
        self._owns_client = client is None
        if client is None:
            with optional_dependency():
                import redis.asyncio
            client = redis.asyncio.Redis.from_url(url or "redis://127.0.0.1:6379/0")
        self.client = client
        self.prefix = prefix
        self.cache_idle = cache_idle
        self.clock = clock
        self._events = RedisEventStore(client, prefix=prefix, max_events=max_events)

    @property
    def event_store(self) -> RedisEventStore:
        return self._events

    def sessions(self, options: SessionOptions) -> RedisSessions:
        store = RedisSessionStore(
            self.client,
            prefix=self.prefix,
            ttl=options.idle_timeout,
            max_sessions=options.max_sessions,
        )
        self._events.ttl = options.idle_timeout  # a session's events live as long as it
        sessions = RedisSessions(
            store, self._events, options.idle_timeout, self.cache_idle, clock=self.clock
        )
        if self._owns_client:  # the app stops: its connections close (a new start reopens)
            sessions.on_stop = self.client.aclose
        return sessions


class _Copy:
    """This worker's copy of a session, and the record `gen` it was made from."""

    __slots__ = ("gen", "restored", "session")

    def __init__(self, session: HTTPSession, gen: int, restored: bool) -> None:
        self.session = session
        self.gen = gen
        self.restored = restored  # rebuilt from the record, not the copy that answered


class RedisSessions:
    """The `Sessions` of a worker sharing them through Redis (see the module docstring)."""

    def __init__(
        self,
        store: RedisSessionStore,
        events: RedisEventStore,
        idle_timeout: float | None,
        cache_idle: float,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self.clock = clock  # when a copy was last used here, and when it is unused
        self.events = events
        self.idle_timeout = idle_timeout
        self.cache_idle = cache_idle if idle_timeout is None else min(cache_idle, idle_timeout)
        self.copies: dict[str, _Copy] = {}
        self._retired: list[HTTPSession] = []  # stale copies still answering a request
        self._sweeper: asyncio.Task[None] | None = None
        self.on_stop: Callable[[], Awaitable[None]] | None = None

    def __len__(self) -> int:
        return len(self.copies)

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
            gen = await self.store.touch(session_id)  # the hot path's one round trip
            if gen is None:  # deleted or expired, on whichever worker
                self._drop(session_id, forget=False)
                return None
            if gen == copy.gen or session.version is None:
                session.last_seen = self.clock()
                return session
            self._retire(session_id)  # changed elsewhere: rebuilt from the record below
        stored = await self.store.load(session_id, _owner(principal))
        if stored is None or stored.snapshot is None or serve is None:
            return None
        return self._rebuild(serve, session_id, principal, stored)

    async def established(self, session: HTTPSession, snapshot: SessionSnapshot) -> None:
        gen = await self.store.save(session.id, snapshot)
        self._seen(session.id, gen)

    async def changed(self, session: HTTPSession, method: str, params: dict[str, Any]) -> None:
        copy = self.copies.get(session.id)
        if method == "notifications/initialized" and (copy is None or not copy.restored):
            return  # the copy that answered initialize saw it: nobody else waits for it
        # Otherwise the copy that answered initialize waits for initialized (it sends no
        # notification until then): bumping `gen` makes it rebuild, ready, from the record.
        pairs: dict[str, Any] = {}
        removed: list[str] = []
        uri = params.get("uri")
        if method == "logging/setLevel":
            pairs["level"] = str(params.get("level"))
        elif method == "resources/subscribe" and type(uri) is str:
            pairs[subscription_field(uri)] = 1
        elif method == "resources/unsubscribe" and type(uri) is str:
            removed.append(subscription_field(uri))
        gen = await self.store.update(session.id, pairs, removed)
        self._seen(session.id, gen)

    async def discard(self, session_id: str) -> None:
        self.copies.pop(session_id, None)
        await self.store.delete(session_id)

    async def terminate(self, session_id: str) -> bool:
        """DELETE: the record goes (every worker's copy then answers 404), then this copy."""
        await self.store.delete(session_id)
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
        for session in self._retired:
            await _end(session, forget=False)
        self._retired.clear()
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
        loop = asyncio.get_running_loop()
        numbering = _NUMBERING + secrets.randbelow(_NUMBERING)
        transport = HTTPSessionTransport(session_id, self.events, principal, numbering)
        transport.refuse_requests = NOT_ROUTED
        session = HTTPSession(session_id, transport, self.clock())
        session.version = None if restored is None else restored.version
        session.task = loop.create_task(serve(transport, restored))
        self.copies[session_id] = _Copy(session, gen, restored is not None)
        session.task.add_done_callback(lambda _: self._ended(session))
        self._start_sweeper()
        return session

    def _rebuild(
        self, serve: Serve, session_id: str, principal: Principal | None, stored: StoredSession
    ) -> HTTPSession:
        return self._start(serve, session_id, principal, stored.snapshot, stored.gen)

    def _seen(self, session_id: str, gen: int | None) -> None:
        copy = self.copies.get(session_id)
        if copy is not None and gen is not None:
            copy.gen = gen

    def _retire(self, session_id: str) -> None:
        """A stale copy: out of the table now, ended once its open requests are answered. Its
        GET stream ends now: the client comes back (GET, Last-Event-ID) to the fresh copy,
        which sends what the client now wants (a new subscription's updates)."""
        copy = self.copies.pop(session_id)
        standalone = copy.session.transport.standalone
        if standalone.attached:
            standalone.end()
        if copy.session.transport.busy():
            self._retired.append(copy.session)
        else:
            copy.session.transport.forget_events = False
            copy.session.transport.shut()

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

    # -- the sweeper -------------------------------------------------------------------------

    def _start_sweeper(self) -> None:
        if self._sweeper is None:
            self._sweeper = asyncio.get_running_loop().create_task(self._sweep())

    async def _sweep(self) -> None:
        """Every so often: drop copies unused here for `cache_idle` s and those whose record
        is gone (deleted elsewhere, expired), end retired copies once idle, and keep the
        records of busy copies alive (an open request or stream is not idleness)."""
        period = max(min(self.cache_idle / 4, 1.0), 0.05)  # a DELETE elsewhere: seen within 1 s
        if self.idle_timeout is not None:
            period = max(min(period, self.idle_timeout / 4), 0.05)
        while self.copies or self._retired:
            await asyncio.sleep(period)
            with contextlib.suppress(Exception):  # Redis away for a moment: next period
                await self.sweep_once()
        self._sweeper = None

    async def sweep_once(self) -> None:
        """One pass of the sweeper (see `_sweep`). Raises what redis-py raises."""
        self._end_retired()
        limit = self.clock() - self.cache_idle
        for session_id, copy in list(self.copies.items()):
            session = copy.session
            if session.last_seen < limit and not session.transport.busy():
                self._drop(session_id, forget=False)
        ids = list(self.copies)
        busy = [i for i in ids if self.copies[i].session.transport.busy()]
        alive = await self.store.alive(ids, busy)
        for session_id in ids:
            if session_id not in alive:
                self._drop(session_id, forget=False)

    def _end_retired(self) -> None:
        still = []
        for session in self._retired:
            if session.transport.busy():
                still.append(session)
            else:
                session.transport.forget_events = False
                session.transport.shut()
        self._retired = still


def _owner(principal: Principal | None) -> str:
    return owner_key(None if principal is None else principal.key)


async def _end(session: HTTPSession, *, forget: bool) -> None:
    session.transport.forget_events = forget
    session.transport.shut()
    if session.task is not None:
        await asyncio.gather(session.task, return_exceptions=True)
