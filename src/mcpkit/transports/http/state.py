"""Where the HTTP app keeps what outlives one request: handshake-era sessions and the SSE
events a client may resume from.

The app asks its `HTTPState` for both in one place (`MCPHTTPApp.__init__`) and nothing else
creates them, so state shared between workers is one object given to the app. `LocalState`
keeps them in this process: a bounded `SessionRegistry` and the event store given (a bounded
`MemoryEventStore` by default). The handshake endpoint uses a registry only through the
methods `Sessions` names. `RedisState` (redis_state.py) shares both between workers.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import NamedTuple, Protocol

from mcpkit.protocol.snapshot import SessionSnapshot
from mcpkit.runtime.fanout import FanOutTarget
from mcpkit.runtime.principal import Principal
from mcpkit.transports.http.event_store import EventStore
from mcpkit.transports.http.sessions import HTTPSession, Serve, SessionOptions, SessionRegistry
from mcpkit.transports.http.streams import ResponseStream


class Sessions(Protocol):
    """The live handshake-era sessions, as the endpoint uses them. Every method may await
    (a registry shared between workers asks Redis)."""

    def __len__(self) -> int:
        """The sessions this process serves now."""
        ...

    def held(self) -> list[HTTPSession]:
        """The sessions this process serves now (a shared registry: its copies)."""
        ...

    async def create(self, serve: Serve, principal: Principal | None = None) -> HTTPSession | None:
        """A new session, served by `serve` from now on; None past the cap (503)."""
        ...

    async def get(
        self, session_id: str, principal: Principal | None = None, serve: Serve | None = None
    ) -> HTTPSession | None:
        """The session, if `principal` opened it (seen now: its idle time starts again), else
        None. A shared registry rebuilds here, served by `serve`, a session another worker
        made."""
        ...

    async def established(self, session: HTTPSession, snapshot: SessionSnapshot) -> None:
        """Its `initialize` was answered with `snapshot` (before the answer leaves)."""
        ...

    async def discard(self, session_id: str) -> None:
        """Forget a session whose `initialize` failed (its id was never given out)."""
        ...

    async def terminate(self, session_id: str) -> bool:
        """End a session (DELETE); False when there is none."""
        ...

    async def terminate_all(self) -> None:
        """End every session this process serves (the app stops)."""
        ...

    async def follow(self, session: HTTPSession, last_event_id: str) -> Followed | None:
        """A lost stream whose request this process does not serve (None: it is answered,
        or unknown: what is stored is replayed and the stream ends)."""
        ...


class Followed(NamedTuple):
    """A lost stream resumed on a worker other than the one whose request still writes it:
    `stream` gets what that worker stores, each sent with the id `record` gives (the one it
    was stored under); `stop()` when the client leaves."""

    stream: ResponseStream
    record: Callable[[str, bytes], str | None]
    stop: Callable[[], None]


class HTTPState(Protocol):
    """The app's state beyond one request (see the module docstring)."""

    # True when several worker processes share it: what each would otherwise keep for
    # itself (the 2026-07-28 request-state sealing keys, tasks) must be shared too.
    shared: bool

    @property
    def event_store(self) -> EventStore | None:
        """Where SSE events wait for a resume; None: no resumability."""
        ...

    def sessions(self, options: SessionOptions) -> Sessions:
        """The registry of handshake-era sessions, made once per app."""
        ...

    async def open(self, server: FanOutTarget | None) -> None:
        """The app starts serving `server` (None: an app not made by a `Server`): a state
        shared between workers joins them here and carries the server's fan-out."""
        ...


class LocalState:
    """In this process: the default. `clock` (seconds, monotonic) is what idle expiry reads:
    a test gives a fake one instead of waiting the timeout out."""

    shared = False

    def __init__(
        self,
        event_store: EventStore | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._event_store = event_store
        self._clock = clock

    @property
    def event_store(self) -> EventStore | None:
        return self._event_store

    async def open(self, server: FanOutTarget | None) -> None:
        """Nothing to join: this process's clients are all the server's clients."""

    def sessions(self, options: SessionOptions) -> SessionRegistry:
        return SessionRegistry(
            options.max_sessions, options.idle_timeout, self._event_store, clock=self._clock
        )
