"""Upstream sessions: which upstream `Client` serves a downstream request.

The policy (docs/gateway.md):

- A handshake-era downstream session gets its own upstream client, opened on the session's
  first forwarded request (never one per call), reused for every later one, and closed when
  the downstream session ends. It speaks the handshake era too when the upstream speaks
  both (mode auto), so the upstream can ask the client things on that session. Its
  sampling, elicitation and roots are the downstream client's (`downstream.py`), so an
  upstream request reaches the client that caused it.
- Requests that belong to no session (2026-07-28: each carries its own envelope; a stateless
  HTTP endpoint's) share one upstream client, opened with the proxy; it also tells the proxy
  what the upstream is (name, capabilities, instructions) before the first client arrives.

An upstream that closed (a crashed stdio server) is forgotten: the next request of its
session opens a new one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from mcpkit.client import Client, ClientOptions, Era
from mcpkit.errors import (
    INTERNAL_ERROR,
    ConnectionClosed,
    MCPError,
    ProtocolError,
    RequestTimeout,
)
from mcpkit.gateway.downstream import Downstream
from mcpkit.gateway.limits import UpstreamGuard, UpstreamLimits
from mcpkit.gateway.listening import UpstreamListening
from mcpkit.gateway.resume import SharedUpstreams, ended_for_good
from mcpkit.gateway.starting import DEFAULT_START_TIMEOUT, Openings
from mcpkit.runtime import Peer, Session
from mcpkit.types.versions import HANDSHAKE_VERSIONS

JSONObject = dict[str, Any]
logger = logging.getLogger("mcpkit.gateway")


class Link:
    """An upstream client and the downstream session it answers to (None: shared); in
    front of a 2026-07-28 upstream, the listens it holds open (`listening.py`)."""

    __slots__ = ("client", "cut", "downstream", "listening")

    def __init__(self, client: Client, downstream: Downstream | None) -> None:
        self.client = client
        self.downstream = downstream
        self.listening: UpstreamListening | None = None
        self.cut = False  # closed for a notification flood: its calls in flight fail too

    async def listen(self) -> Link:
        """A 2026-07-28 upstream: hold a listen open for its list_changed (see
        `listening.py`); nothing to do for a handshake-era one."""
        if self.client.era is Era.PER_REQUEST:
            self.listening = UpstreamListening(self.client)
            await self.listening.lists()
        return self


class Upstreams:
    """The upstream clients of one proxy: one per downstream session, one shared."""

    def __init__(self, target: Any, options: ClientOptions) -> None:
        self.target = target
        self.options = options
        self._shared: Link | None = None
        self._shared_options = options
        self._reopening = asyncio.Lock()
        self._links: dict[Peer, asyncio.Task[Link]] = {}
        self.opened = 0  # upstream clients opened so far (the shared one included)
        self.name: str | None = None  # the gateway's name for this upstream, for errors
        self.guard = UpstreamGuard(UpstreamLimits())  # proxy(limits=...) sets its own
        self._cutting: set[asyncio.Task[None]] = set()
        # Several workers (a shared HTTP state): HTTP upstream sessions follow their
        # downstream session from worker to worker (resume.py). None: this process's own.
        self.sharing: SharedUpstreams | None = None
        self.start_timeout: float | None = DEFAULT_START_TIMEOUT  # each opening's bound
        self._openings = Openings()

    @property
    def started(self) -> bool:
        """Whether the shared upstream client opened (it is then kept, or reopened)."""
        return self._shared is not None

    async def open_shared(self, on_notification: Callable[[str, JSONObject | None], None]) -> Link:
        """Open the shared upstream client. Raises what `Client.__aenter__` raises."""
        options = self.options
        if options.on_notification is None:
            options = _replace(options, on_notification=on_notification)
        dropping = self.guard.metered(options.on_notification, self._shared_flooded)
        options = _replace(options, on_notification=dropping)
        self._shared_options = options
        self._shared = await Link(await self._open(options), None).listen()
        if self.sharing is not None:  # the upstream sessions of expired sessions end
            self.sharing.watch(self.target, self.options)
        return self._shared

    @property
    def shared(self) -> Link:
        if self._shared is None:
            raise RuntimeError("the proxy is not running: serve it, or enter server.running()")
        return self._shared

    async def link_for(self, peer: Peer, shared: bool, declared: JSONObject) -> Link:
        """The upstream for a downstream request: the `shared` one for a request of no
        session, else its session's (opened now, for the capabilities the client `declared`).

        Raises ProtocolError -32603 when the upstream cannot be reached.
        """
        if shared:
            return self.shared
        opening = self._links.get(peer)
        if opening is None:
            opening = asyncio.ensure_future(self._open_link(peer, declared))
            self._links[peer] = opening
        try:
            return await asyncio.shield(opening)
        except Exception as exc:
            if self._links.get(peer) is opening:
                del self._links[peer]
            raise unreachable(exc, self.name) from None

    async def forget(self, peer: Peer, link: Link) -> None:
        """Drop an upstream that closed: its session's next request opens a new one (the
        shared one is opened again now)."""
        if link is self._shared:
            await self._reopen_shared(link)
            return
        opening = self._links.get(peer)
        if opening is not None and opening.done() and _opened(opening) is link:
            del self._links[peer]
            if self.sharing is not None:
                await self.sharing.dropped(peer)
            await link.client.close()

    async def close_ended(self) -> None:
        """Close the upstreams of downstream sessions that ended (a server's `serve` of one
        returned)."""
        ended = [peer for peer in self._links if isinstance(peer, Session) and peer.closed]
        for peer in ended:
            opening = self._links.pop(peer, None)
            if opening is not None:
                await _close(opening, self.sharing, peer)

    async def session_ended(self, transport: Any) -> None:
        """A downstream copy on `transport` stopped: with shared upstream sessions, one that
        ended for good (DELETE here) ends its upstream session even when this worker held no
        client of it (resume.py)."""
        if self.sharing is None or not ended_for_good(transport):
            return
        session_id = getattr(transport, "session_id", None)
        if isinstance(session_id, str):
            await self.sharing.ended(session_id, self.target, self.options)

    async def aclose(self) -> None:
        """Close every upstream client (the proxy stops)."""
        links, self._links = list(self._links.items()), {}
        for peer, opening in links:
            await _close(opening, self.sharing, peer)
        if self.sharing is not None:
            self.sharing.stop()
        if self._shared is not None:
            shared, self._shared = self._shared, None
            await shared.client.close()
        await self._openings.aclose()

    async def _reopen_shared(self, dead: Link) -> None:
        async with self._reopening:
            if self._shared is not dead:
                return  # another request did it already
            await dead.client.close()
            try:
                self._shared = await Link(await self._open(self._shared_options), None).listen()
            except Exception as exc:  # still down: the next failed request tries again
                logger.warning("the upstream server could not be reached again: %s", exc)

    async def open_link(self, options: ClientOptions) -> Link:
        """A new upstream client of no session (see `asking.py`). Raises what
        `Client.__aenter__` raises."""
        return Link(await self._open(options), None)

    async def _open_link(self, peer: Peer, declared: JSONObject) -> Link:
        downstream = Downstream(peer)
        options = downstream.client_options(self._session_options(), declared)
        flooded = self.guard.metered(options.on_notification, lambda: self._cut_off(peer))
        options = _replace(options, on_notification=flooded)
        if self.sharing is not None:
            client = await self.sharing.open(peer, self.target, options, self._open)
        else:
            client = await self._open(options)
        return await Link(client, downstream).listen()

    def session_era(self) -> Era:
        """The era a handshake-era downstream session's upstream client speaks (or will):
        see `_session_options`."""
        if self._session_options().mode == Era.HANDSHAKE:
            return Era.HANDSHAKE
        return self.shared.client.era

    def _session_options(self) -> ClientOptions:
        """A handshake-era downstream session's upstream options: in its era when the proxy
        settles the era (auto) and the upstream speaks both, so that the upstream's requests
        (sampling, elicitation, roots, even ones outside any call) have a session to reach
        the client on; else the proxy's own."""
        shared = self._shared
        if self.options.mode not in (None, "auto") or shared is None:
            return self.options
        if shared.client.era is not Era.PER_REQUEST:
            return self.options
        supported = (shared.client.discovered or {}).get("supportedVersions")
        if isinstance(supported, list) and any(v in HANDSHAKE_VERSIONS for v in supported):
            return _replace(self.options, mode=Era.HANDSHAKE)
        return self.options

    def _shared_flooded(self) -> None:
        logger.warning("%s floods notifications: the extra ones are dropped", self._which())

    def _cut_off(self, peer: Peer) -> None:
        """A session's upstream sent notifications over the limit: close it (its calls end
        with -32603) and tell the session; its next request opens a new one."""
        logger.warning("%s floods notifications: its session is closed", self._which())
        opening = self._links.pop(peer, None)
        link = None if opening is None or not opening.done() else _opened(opening)
        if link is not None:
            link.cut = True
        with contextlib.suppress(MCPError):  # the downstream session may be gone
            peer.notify("notifications/message", _flood_message(self._which()))
        if opening is not None:
            if self.sharing is not None:  # its record goes too: the next request opens anew
                dropping = asyncio.ensure_future(self.sharing.dropped(peer))
                self._cutting.add(dropping)
                dropping.add_done_callback(self._cutting.discard)
            task = asyncio.ensure_future(_close(opening))  # not from inside its own reader
            self._cutting.add(task)
            task.add_done_callback(self._cutting.discard)

    def _which(self) -> str:
        return "the upstream server" if self.name is None else f"the upstream server {self.name!r}"

    async def _open(self, options: ClientOptions) -> Client:
        client = Client.with_options(self.target, options)
        await self._openings.within(client.__aenter__(), self.start_timeout, "initialize")
        self.opened += 1
        return client


def _flood_message(which: str) -> JSONObject:
    text = f"{which} sent too many notifications: its session was closed"
    return {"level": "error", "logger": "mcpkit.gateway", "data": text}


def _opened(opening: asyncio.Task[Link]) -> Link | None:
    if opening.cancelled() or opening.exception() is not None:
        return None
    return opening.result()


def unreachable(exc: BaseException, server: str | None = None) -> ProtocolError:
    """The error a downstream client gets when the upstream (the gateway's `server`) failed
    under its request. The
    detail stays in the proxy's log: a stdio server's stderr tail, which `ConnectionClosed`
    carries, is the operator's to read, not the client's."""
    logger.info("upstream failed: %s", exc)
    if isinstance(exc, RequestTimeout):
        why = "it did not answer in time"
    elif isinstance(exc, ConnectionClosed) and str(exc).startswith("could not start"):
        why = "it could not be started"
    elif isinstance(exc, ConnectionClosed):
        why = "the connection to it closed"
    else:
        why = f"it could not be reached ({type(exc).__name__})"
    which = "the upstream server" if server is None else f"the upstream server {server!r}"
    return ProtocolError(INTERNAL_ERROR, f"{which} is unavailable: {why}")


async def _close(
    opening: asyncio.Task[Link], sharing: SharedUpstreams | None = None, peer: Peer | None = None
) -> None:
    if not opening.done():
        opening.cancel()
    await asyncio.wait([opening])
    link = _opened(opening)
    if link is None:  # it never opened: nothing to close
        return
    if sharing is not None and peer is not None:  # closed, or left to the other workers
        await sharing.release(peer, link.client)
    else:
        await link.client.close()


def _replace(options: ClientOptions, **changes: Any) -> ClientOptions:
    import dataclasses

    return dataclasses.replace(options, **changes)
