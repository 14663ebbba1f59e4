"""Where the HTTP app keeps what outlives one request: handshake-era sessions and the SSE
events a client may resume from.

The app asks its `HTTPState` for both in one place (`MCPHTTPApp.__init__`) and nothing else
creates them, so state shared between workers is one object given to the app. `LocalState`
keeps them in this process: a bounded `SessionRegistry` and the event store given (a bounded
`MemoryEventStore` by default). The handshake endpoint uses a registry only through the
methods `Sessions` names.
"""

from __future__ import annotations

from typing import Protocol

from mcpkit.runtime.principal import Principal
from mcpkit.transports.http.event_store import EventStore
from mcpkit.transports.http.sessions import HTTPSession, Serve, SessionOptions, SessionRegistry


class Sessions(Protocol):
    """The live handshake-era sessions, as the endpoint uses them."""

    def __len__(self) -> int: ...

    def full(self) -> bool:
        """Whether a new session would pass the cap (its `initialize` gets 503)."""
        ...

    def create(self, serve: Serve, principal: Principal | None = None) -> HTTPSession:
        """A new session, served by `serve` from now on."""
        ...

    def get(self, session_id: str) -> HTTPSession | None:
        """The session (seen now: its idle time starts again), or None."""
        ...

    def discard(self, session_id: str) -> None:
        """Forget a session whose `initialize` failed (its id was never given out)."""
        ...

    async def terminate(self, session_id: str) -> bool:
        """End a session (DELETE); False when there is none."""
        ...

    async def terminate_all(self) -> None:
        """End every session (the app stops)."""
        ...


class HTTPState(Protocol):
    """The app's state beyond one request (see the module docstring)."""

    @property
    def event_store(self) -> EventStore | None:
        """Where SSE events wait for a resume; None: no resumability."""
        ...

    def sessions(self, options: SessionOptions) -> Sessions:
        """The registry of handshake-era sessions, made once per app."""
        ...


class LocalState:
    """In this process: the default."""

    def __init__(self, event_store: EventStore | None = None) -> None:
        self._event_store = event_store

    @property
    def event_store(self) -> EventStore | None:
        return self._event_store

    def sessions(self, options: SessionOptions) -> SessionRegistry:
        return SessionRegistry(options.max_sessions, options.idle_timeout, self._event_store)
