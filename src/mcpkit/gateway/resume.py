"""Upstream sessions that follow their downstream session across a proxy's workers.

With a shared state (`proxy(...).http_app(state=RedisState(url))`, `mcpkit proxy --redis`),
any worker serves any request of a downstream session. Its upstream session must follow: a
worker serving the session for the first time goes on with the upstream HTTP session another
worker opened (`Client.resume`: no handshake, the upstream sees one session) instead of
opening its own.

Records (stores/upstream_sessions.py; in Redis, stores/redis_upstreams.py): one per downstream
session and upstream, the upstream session (`OpenedSession`: its `Mcp-Session-Id` and the
InitializeResult) sealed with AES-256-GCM under a key derived from the server's requestState
keys (which every worker shares), bound to the downstream session and the upstream: the store
never holds an upstream session id in clear, and a record cannot be moved to another session.
The first worker to record one keeps it; one that lost that race closes its own and goes on
with the winner's. While one worker opens it, the others wait (a lease with an owner token,
stores/lease.py: a worker slower than the lease's ttl never ends another's).

Lifetime: a record lives as long as its downstream session and a grace period longer, so
that it can still be read once that session expired. While a worker holds an upstream client
for a session it renews its record with the session, one round trip per period for all of
them, never on a request's path. A downstream session that ends for good (DELETE, on any
worker) closes its upstream sessions (the upstream gets DELETE) and drops the record; a
worker that only drops its copy (idle here, the worker stops, a DELETE seen elsewhere)
detaches.

Expiry: a downstream session that ends by its idle timeout is nobody's to end (every copy
only detaches), so the store keeps an index of when each downstream session expires. Every
period each worker claims the records of the sessions past due that are really gone (one
worker only gets each) and resumes each such upstream session and closes it (the upstream
gets DELETE).

Only HTTP upstream sessions are shared: a stdio upstream is a process of one worker, so each
worker opens its own for the downstream sessions it serves (docs/gateway.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import logging
import os
import secrets
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

import orjson

from mcpkit.client import Client, ClientOptions
from mcpkit.client.resume import OpenedSession
from mcpkit.errors import MCPError
from mcpkit.protocol import Outgoing
from mcpkit.protocol.jsonrpc import encode_notification
from mcpkit.protocol.outgoing import FANNED_OUT
from mcpkit.stores import StoreUnavailable
from mcpkit.stores.lease import Leases
from mcpkit.stores.redis_lease import RedisLease
from mcpkit.stores.redis_upstreams import RedisUpstreamSessions
from mcpkit.stores.upstream_sessions import UpstreamSessions

if TYPE_CHECKING:
    from mcpkit.runtime import Peer
    from mcpkit.server.request_state import RequestStateKeys

logger = logging.getLogger("mcpkit.gateway")

JSONObject = dict[str, Any]
Open = Callable[[ClientOptions], Awaitable[Client]]
DEFAULT_IDLE_TIMEOUT = 1800.0  # the HTTP app's (SessionOptions), when not given
OPENING_WAIT = 10.0  # how long a worker waits for another's upstream handshake (seconds)
_KEY_ID, _NONCE = 4, 12
SWEEP_BATCH = 100  # expired entries claimed per script pipeline
SWEEP_BATCHES = 10  # at most this many per period (more: the next period goes on)
CLOSING_WAIT = 10.0  # at most this long for an expired upstream session's DELETE (seconds)


class Sealer:
    """Seals upstream sessions for the shared store (see the module docstring). The first of `keys`
    seals; all of them open, so keys rotate as requestState keys do."""

    def __init__(self, keys: RequestStateKeys) -> None:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM  # a core dependency

        derived = [
            hashlib.sha256(b"mcpkit gateway upstream v1\0" + k).digest() for k in keys.aes_keys
        ]
        self._ciphers = {hashlib.sha256(k).digest()[:_KEY_ID]: AESGCM(k) for k in derived}
        self._sealer = next(iter(self._ciphers.items()))

    def seal(self, opened: OpenedSession, bound: bytes) -> bytes:
        key_id, cipher = self._sealer
        nonce = os.urandom(_NONCE)
        plain = orjson.dumps({"s": opened.session_id, "r": opened.initialize_result})
        return key_id + nonce + cipher.encrypt(nonce, plain, bound)

    def open(self, sealed: bytes, bound: bytes) -> OpenedSession | None:
        """The upstream session in `sealed`; None when it does not open (another key,
        tampered with, another session's)."""
        from cryptography.exceptions import InvalidTag

        cipher = self._ciphers.get(sealed[:_KEY_ID])
        if cipher is None:
            return None
        nonce = sealed[_KEY_ID : _KEY_ID + _NONCE]
        try:
            plain = orjson.loads(cipher.decrypt(nonce, sealed[_KEY_ID + _NONCE :], bound))
        except (InvalidTag, orjson.JSONDecodeError):
            return None
        session, result = plain.get("s"), plain.get("r")
        if type(session) is not str or type(result) is not dict:
            return None
        return OpenedSession(session, result)


class SharedUpstreams:
    """One upstream's sessions as a proxy's workers share them (`records`, `lease`), for the
    `Upstreams` of upstream `name` ("" for a plain proxy); `ttl`: the downstream sessions'
    idle timeout (None: none). A store failing raises StoreUnavailable only through `open`,
    which `Upstreams` reports as the upstream being unreachable; elsewhere the store logged
    it once per outage and the next period tries again."""

    def __init__(
        self,
        records: UpstreamSessions,
        lease: Leases,
        keys: RequestStateKeys,
        ttl: float | None,
        name: str,
    ) -> None:
        self.records = records
        self.lease = lease
        self.sealer = Sealer(keys)
        self.ttl = ttl
        self.field = name
        self.period = sweep_period(ttl)
        self._held: dict[Peer, tuple[str, bytes]] = {}  # peer -> its session id, the record
        self._refresher: asyncio.Task[None] | None = None
        self._sweeper: asyncio.Task[None] | None = None

    def _bound(self, session_id: str) -> bytes:
        return session_id.encode() + b"\0" + self.field.encode()

    async def open(self, peer: Peer, target: Any, options: ClientOptions, new: Open) -> Client:
        """The upstream client of `peer`'s session: the recorded upstream session resumed,
        else a new one (`new(options)`) recorded. Raises what opening a client raises."""
        session_id = downstream_session(peer)
        if session_id is None:
            return await new(options)  # not a session served over HTTP
        options = homeward(peer, options)
        if not is_url(target):
            return await new(options)  # a stdio upstream: this worker's own process
        sealed, owner = await self._recorded(session_id)
        if sealed is not None:
            client = await self._resume(peer, session_id, sealed, target, options)
            if client is not None:
                return client
        try:
            client = await new(options)
            return await self._record(
                peer, session_id, client, target=target, options=options, new=new
            )
        finally:
            if owner is not None:  # only ours: another's, once ours expired, stays
                with contextlib.suppress(StoreUnavailable):  # logged; it expires anyway
                    await self.lease.release(self._opening(session_id), owner)

    def _opening(self, session_id: str) -> str:
        return f"upstream-opening:{self.field}:{session_id}"

    async def _recorded(self, session_id: str) -> tuple[bytes | None, str | None]:
        """The recorded upstream session of `session_id` (and None); when there is none,
        (None, owner) once this worker took the lease to open it (as `owner`), after
        waiting while another worker had it (the first requests of a session often come at
        once: one handshake, not one per worker). (None, None) when that worker did not
        record one within `OPENING_WAIT` s (it died): this one opens its own, and the
        record's first writer still wins."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + OPENING_WAIT
        key, owner = self._opening(session_id), secrets.token_hex(16)
        while True:
            sealed = await self.records.get(session_id)
            if sealed is not None:
                return sealed, None
            if await self.lease.acquire(key, owner, OPENING_WAIT):
                return None, owner
            if loop.time() > deadline:
                return None, None
            await asyncio.sleep(0.01)  # another worker's handshake is under way

    async def _record(
        self,
        peer: Peer,
        session_id: str,
        client: Client,
        *,
        target: str,
        options: ClientOptions,
        new: Open,
    ) -> Client:
        """Record `client`'s new upstream session for the other workers; if another worker
        recorded one first, close ours and go on with that one."""
        opened = client.opened_session()
        if opened is None:  # the upstream spoke another era: nothing to share
            return client
        sealed = self.sealer.seal(opened, self._bound(session_id))
        # This request just renewed the downstream session: the record follows it.
        kept = await self.records.record(session_id, sealed, self.ttl)
        if kept == sealed:
            self._hold(peer, session_id, sealed)
            return client
        await client.close()
        resumed = await self._resume(peer, session_id, kept, target, options)
        return resumed if resumed is not None else await new(options)

    async def _resume(
        self, peer: Peer, session_id: str, sealed: bytes, target: str, options: ClientOptions
    ) -> Client | None:
        opened = self.sealer.open(sealed, self._bound(session_id))
        if opened is None:
            logger.warning("an upstream session record did not open (another key?): replaced")
            await self.records.drop(session_id, sealed)
            return None
        client = Client.with_options(target, options)
        try:
            await client.resume(opened)
        except MCPError as exc:  # a revision this worker does not speak: open a new one
            logger.warning("the upstream session could not be resumed: %s", exc)
            await self.forget(session_id, sealed)
            return None
        self._hold(peer, session_id, sealed)
        return client

    def _hold(self, peer: Peer, session_id: str, sealed: bytes) -> None:
        self._held[peer] = (session_id, sealed)
        if self._refresher is None and self.ttl is not None:
            self._refresher = asyncio.get_running_loop().create_task(self._refresh())

    async def release(self, peer: Peer, client: Client) -> None:
        """`peer`'s copy stopped: its upstream client closes. When the downstream session
        ended for good the upstream session ends too (DELETE) and leaves the record; else
        it is left to the other workers (detached)."""
        held = self._held.pop(peer, None)
        if held is None or not ended_for_good(getattr(peer, "transport", None)):
            await (client.detach() if held is not None else client.close())
            return
        await client.close()
        await self.forget(*held)

    async def dropped(self, peer: Peer) -> None:
        """`peer`'s upstream session failed (closed, cut off): its record goes, so the next
        request opens a new one instead of resuming a dead one."""
        held = self._held.pop(peer, None)
        if held is not None:
            with contextlib.suppress(StoreUnavailable):  # logged; the next resume fails the same
                await self.forget(*held)

    async def forget(self, session_id: str, sealed: bytes) -> None:
        await self.records.drop(session_id, sealed)

    async def ended(self, session_id: str, target: Any, options: ClientOptions) -> None:
        """The downstream session `session_id` ended for good on a copy holding no client of
        this upstream: end the upstream session recorded for it (resumed, then closed)."""
        sealed = await self.records.take(session_id)
        if sealed is not None:
            await self._end_upstream(session_id, sealed, target, options)

    async def _end_upstream(
        self, session_id: str, sealed: bytes, target: Any, options: ClientOptions
    ) -> None:
        """End the upstream session sealed in `sealed` (resumed, then closed: DELETE)."""
        opened = self.sealer.open(sealed, self._bound(session_id))
        if opened is None or not is_url(target):
            return
        client = Client.with_options(target, options)
        with contextlib.suppress(Exception):  # gone already, or unreachable: nothing to end
            async with asyncio.timeout(CLOSING_WAIT):
                await client.resume(opened)
                await client.close()

    def watch(self, target: Any, options: ClientOptions) -> None:
        """Start this worker's expiry sweep: every period, the upstream sessions of
        downstream sessions that expired are ended (see the module docstring)."""
        if self.ttl is None or not is_url(target) or self._sweeper is not None:
            return
        self._sweeper = asyncio.get_running_loop().create_task(self._sweep(target, options))

    async def _sweep(self, target: Any, options: ClientOptions) -> None:
        while True:
            await asyncio.sleep(self.period)
            try:
                await self.sweep_once(target, options)
            except StoreUnavailable:  # logged by the store once per outage: the next period
                pass
            except Exception:  # a bug: said, and the sweep goes on
                logger.exception("the upstream expiry sweep failed")

    async def sweep_once(self, target: Any, options: ClientOptions) -> int:
        """End the upstream sessions whose downstream session expired and that this worker
        claimed; how many. A DELETE to the upstream for each. Raises StoreUnavailable."""
        ended = 0
        for _ in range(SWEEP_BATCHES):
            due = await self.records.claim_expired(SWEEP_BATCH)
            ending = [
                self._end_upstream(session_id, sealed, target, options)
                for session_id, sealed in due
                if sealed is not None
            ]
            await asyncio.gather(*ending)
            ended += len(ending)
            if len(due) < SWEEP_BATCH:
                break
        return ended

    async def _refresh(self) -> None:
        """Every `period`: the records of the sessions held here live as long as their
        downstream records, and the index says until when (one round trip)."""
        try:
            while self._held:
                await asyncio.sleep(self.period)
                held = {session_id for session_id, _ in self._held.values()}
                with contextlib.suppress(StoreUnavailable):  # logged; the next period
                    await self.records.refresh(held)
        finally:
            self._refresher = None

    def stop(self) -> None:
        for task in (self._refresher, self._sweeper):
            if task is not None:
                task.cancel()
        self._sweeper = None


def sweep_period(ttl: float | None) -> float:
    """Seconds between a worker's refreshes and expiry sweeps, for an idle timeout `ttl`."""
    return 30.0 if ttl is None else max(0.05, min(ttl / 4, 30.0))


def grace(ttl: float | None) -> float:
    """How long a record outlives its downstream session: the expiry sweep (every period,
    on every worker) reads it after the session expired."""
    return 2 * sweep_period(ttl) + 1


def homeward(peer: Peer, options: ClientOptions) -> ClientOptions:
    """`options` whose upstream notifications that every worker's server would send to its
    own sessions (list_changed, resources/updated: `FANNED_OUT`) reach `peer`'s session on
    the worker holding its GET stream. A server's own such notifications are sent by each
    worker, so a copy that is not the session's home drops them; an upstream session's are
    this session's alone and arrive on one worker only, so they are passed home here."""
    notify = options.on_notification
    transport: Any = getattr(peer, "transport", None)
    relay = getattr(transport, "relay", None)
    if notify is None or relay is None:
        return options  # the session's only copy: sent as it comes

    def routed(method: str, params: JSONObject | None) -> None:
        notify(method, params)  # metered; sent here when the GET stream is here
        if method in FANNED_OUT and transport.home is False:
            data = encode_notification(method, params)
            relay.to_home(transport.session_id, Outgoing(data, method=method))

    return dataclasses.replace(options, on_notification=routed)


def is_url(target: Any) -> bool:
    """An HTTP upstream (its sessions can be shared; a stdio one's cannot)."""
    return isinstance(target, str) and target.startswith(("http://", "https://"))


def downstream_session(peer: Peer) -> str | None:
    """The `Mcp-Session-Id` of `peer`'s session when it is served over HTTP (else None)."""
    session_id = getattr(getattr(peer, "transport", None), "session_id", None)
    return session_id if isinstance(session_id, str) else None


def ended_for_good(transport: Any) -> bool:
    """Whether the session served on `transport` ended (DELETE, its idle timeout in one
    process, its stdio connection closed), not just this worker's copy of it. A copy among
    several workers that stops keeps the session's stored events (`forget_events` False):
    that tells."""
    return getattr(transport, "forget_events", True) is not False


def sharing(options: Mapping[str, Any], keys: RequestStateKeys, name: str | None) -> Any:
    """The `SharedUpstreams` of upstream `name` for an HTTP app made with `options` (None
    when its `state` is not shared: each process keeps its own upstream sessions)."""
    state = options.get("state")
    if state is None or not getattr(state, "shared", False) or not hasattr(state, "client"):
        return None
    ttl = options.get("idle_timeout", DEFAULT_IDLE_TIMEOUT)
    name = name or ""
    records = RedisUpstreamSessions(state.client, state.prefix, name, grace=grace(ttl))
    return SharedUpstreams(records, RedisLease(state.client, state.prefix), keys, ttl, name)
