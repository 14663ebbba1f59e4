"""Upstream sessions that follow their downstream session across a proxy's workers.

With a shared state (`proxy(...).http_app(state=RedisState(url))`, `mcpkit proxy --redis`),
any worker serves any request of a downstream session. Its upstream session must follow: a
worker serving the session for the first time goes on with the upstream HTTP session another
worker opened (`Client.resume`: no handshake, the upstream sees one session) instead of
opening its own.

Layout: `{prefix}upstreams:{downstream session id}`, a hash with one field per upstream (its
gateway name; "" for a plain proxy). The value is the upstream session (`OpenedSession`: its
`Mcp-Session-Id` and the InitializeResult) sealed with AES-256-GCM under a key derived from
the server's requestState keys (which every worker shares), bound to the downstream session
and the upstream: Redis never holds an upstream session id in clear, and a record cannot be
moved to another session. The first worker to open one keeps it (HSETNX); one that lost that
race closes its own and goes on with the winner's.

Lifetime: the hash lives as long as the downstream session's record
(`{prefix}session:{id}`, stores/redis_sessions.py) and `grace` longer, so that it can still be
read once that record expired. While a worker holds an upstream client for a session it
copies the record's expiry onto the hash, one pipelined round trip per period for all of
them, never on a request's path. A downstream session that ends for good (DELETE, on any
worker) closes its upstream sessions (the upstream gets DELETE) and drops the hash; a worker
that only drops its copy (idle here, the worker stops, a DELETE seen elsewhere) detaches.

Expiry: a downstream session that ends by its idle timeout is nobody's to end (every copy
only detaches), so each upstream keeps an index, `{prefix}upstream-expiry:{name}`, a sorted
set of session ids scored by when the downstream record expires (epoch ms, written with the
record and by the refresh). Every period each worker reads the entries past due and, in one
script per entry, checks that the downstream record is really gone (one still used where no
upstream client refreshes the index is scored again) and claims the entry (ZREM returning 1:
one worker only) with the upstream session's sealed record; it then resumes that upstream
session and closes it (the upstream gets DELETE).

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
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

import orjson

from mcpkit.client import Client, ClientOptions
from mcpkit.client.resume import OpenedSession
from mcpkit.errors import MCPError
from mcpkit.protocol import Outgoing
from mcpkit.protocol.jsonrpc import encode_notification
from mcpkit.protocol.outgoing import FANNED_OUT
from mcpkit.stores.redis_sessions import session_key

if TYPE_CHECKING:
    from mcpkit.runtime import Peer
    from mcpkit.server.request_state import RequestStateKeys

logger = logging.getLogger("mcpkit.gateway")

JSONObject = dict[str, Any]
Open = Callable[[ClientOptions], Awaitable[Client]]
DEFAULT_IDLE_TIMEOUT = 1800.0  # the HTTP app's (SessionOptions), when not given
OPENING_WAIT = 10.0  # how long a worker waits for another's upstream handshake (seconds)
_KEY_ID, _NONCE = 4, 12
# KEYS: the hash. ARGV: field, the value a worker read. Deleted only if unchanged since.
_DROP_IF_SAME = """
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
return redis.call('HDEL', KEYS[1], ARGV[1])
"""
# KEYS: the downstream session's record, the hash, the expiry index. ARGV: session id, now
# (ms), grace (ms). The hash lives as long as the record (and `grace` more); the index says
# when the record expires. Nothing written for a record gone (the expiry sweep ends it).
_REFRESH = """
local left = redis.call('PTTL', KEYS[1])
if left < 0 or redis.call('EXISTS', KEYS[2]) == 0 then return 0 end
redis.call('PEXPIRE', KEYS[2], left + tonumber(ARGV[3]))
redis.call('ZADD', KEYS[3], tonumber(ARGV[2]) + left, ARGV[1])
return 1
"""
# KEYS: the downstream session's record, the expiry index, the hash. ARGV: session id, field,
# now (ms), grace (ms). A record still there (used where no upstream client refreshes the
# index) is scored again. Else the entry is claimed (ZREM: one worker) and the upstream
# session's sealed record taken out of the hash (nil: another worker claimed it, or no record).
_CLAIM_EXPIRED = """
local left = redis.call('PTTL', KEYS[1])
if left >= 0 then
  redis.call('ZADD', KEYS[2], 'XX', tonumber(ARGV[3]) + left, ARGV[1])
  redis.call('PEXPIRE', KEYS[3], left + tonumber(ARGV[4]))
  return false
end
if left == -1 then  -- a record that never expires: not for this index
  redis.call('ZREM', KEYS[2], ARGV[1])
  return false
end
if redis.call('ZREM', KEYS[2], ARGV[1]) == 0 then return false end
local sealed = redis.call('HGET', KEYS[3], ARGV[2])
if sealed then redis.call('HDEL', KEYS[3], ARGV[2]) end
return sealed
"""
SWEEP_BATCH = 100  # expired entries claimed per script pipeline
SWEEP_BATCHES = 10  # at most this many per period (more: the next period goes on)
CLOSING_WAIT = 10.0  # at most this long for an expired upstream session's DELETE (seconds)


class Sealer:
    """Seals upstream sessions for Redis (see the module docstring). The first of `keys`
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
    """One upstream's sessions as a proxy's workers share them through Redis (`client`,
    keys under `prefix`), for the `Upstreams` of upstream `name` ("" for a plain proxy).
    Its methods raise StateUnavailable-like errors from redis-py only through `open`, which
    `Upstreams` reports as the upstream being unreachable."""

    def __init__(
        self, client: Any, prefix: str, keys: RequestStateKeys, ttl: float | None, name: str
    ) -> None:
        self.client = client
        self.prefix = prefix + "upstreams:"
        self.service = prefix  # its downstream sessions' records: `session_key`
        self.index = f"{prefix}upstream-expiry:{name}"
        self.sealer = Sealer(keys)
        self.ttl_ms = None if ttl is None else max(1, round(ttl * 1000))
        self.field = name
        self.period = 30.0 if ttl is None else max(0.05, min(ttl / 4, 30.0))
        # The hash outlives the downstream record by this much: the expiry sweep (every
        # period, on every worker) reads it after the record expired.
        self.grace_ms = round((2 * self.period + 1) * 1000)
        self._drop = client.register_script(_DROP_IF_SAME)
        self._refresh_one = client.register_script(_REFRESH)
        self._claim = client.register_script(_CLAIM_EXPIRED)
        self._held: dict[Peer, tuple[str, bytes]] = {}  # peer -> its session id, the record
        self._refresher: asyncio.Task[None] | None = None
        self._sweeper: asyncio.Task[None] | None = None

    def key(self, session_id: str) -> str:
        return self.prefix + session_id

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
        sealed, locked = await self._recorded(session_id)
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
            if locked:
                await self.client.delete(self._lock(session_id))

    def _lock(self, session_id: str) -> str:
        return f"{self.key(session_id)}:opening:{self.field}"

    async def _recorded(self, session_id: str) -> tuple[bytes | None, bool]:
        """The recorded upstream session of `session_id` (and False); when there is none,
        (None, True) once this worker took the right to open it, after waiting while
        another worker had it (the first requests of a session often come at once: one
        handshake, not one per worker). (None, False) when that worker did not record one
        within `OPENING_WAIT` s (it died): this one opens its own, HSETNX still decides."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + OPENING_WAIT
        key, lock = self.key(session_id), self._lock(session_id)
        while True:
            sealed: bytes | None = await self.client.hget(key, self.field)
            if sealed is not None:
                return sealed, False
            if await self.client.set(lock, b"1", nx=True, px=round(OPENING_WAIT * 1000)):
                return None, True
            if loop.time() > deadline:
                return None, False
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
        key = self.key(session_id)
        sealed = self.sealer.seal(opened, self._bound(session_id))
        async with self.client.pipeline(transaction=True) as pipe:
            pipe.hsetnx(key, self.field, sealed)
            pipe.hget(key, self.field)
            if self.ttl_ms is not None:  # this request just refreshed the downstream record
                pipe.pexpire(key, self.ttl_ms + self.grace_ms)
                pipe.zadd(self.index, {session_id: _now_ms() + self.ttl_ms})
            _, kept, *_ = await pipe.execute()
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
            await self._drop(keys=[self.key(session_id)], args=[self.field, sealed])
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
        if self._refresher is None and self.ttl_ms is not None:
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
            with contextlib.suppress(Exception):  # Redis away: the next resume fails the same
                await self.forget(*held)

    async def forget(self, session_id: str, sealed: bytes) -> None:
        await self._drop(keys=[self.key(session_id)], args=[self.field, sealed])

    async def ended(self, session_id: str, target: Any, options: ClientOptions) -> None:
        """The downstream session `session_id` ended for good on a copy holding no client of
        this upstream: end the upstream session recorded for it (resumed, then closed)."""
        key = self.key(session_id)
        async with self.client.pipeline(transaction=True) as pipe:
            pipe.hget(key, self.field)
            pipe.hdel(key, self.field)
            pipe.zrem(self.index, session_id)
            sealed, *_ = await pipe.execute()
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
        if self.ttl_ms is None or not is_url(target) or self._sweeper is not None:
            return
        self._sweeper = asyncio.get_running_loop().create_task(self._sweep(target, options))

    async def _sweep(self, target: Any, options: ClientOptions) -> None:
        while True:
            await asyncio.sleep(self.period)
            try:
                await self.sweep_once(target, options)
            except Exception as exc:  # Redis away for a moment: the next period
                logger.warning("the upstream expiry sweep failed: %s", type(exc).__name__)

    async def sweep_once(self, target: Any, options: ClientOptions) -> int:
        """End the upstream sessions whose downstream session expired and that this worker
        claimed; how many. Two round trips when some are due (one when none are), then a
        DELETE to the upstream for each. Raises what redis-py raises."""
        ended = 0
        for _ in range(SWEEP_BATCHES):
            now = _now_ms()
            due = await self.client.zrangebyscore(self.index, "-inf", now, 0, SWEEP_BATCH)
            if not due:
                return ended
            ids = [_text(session_id) for session_id in due]
            async with self.client.pipeline(transaction=False) as pipe:
                for session_id in ids:
                    keys = [session_key(self.service, session_id), self.index, self.key(session_id)]
                    args = [session_id, self.field, now, self.grace_ms]
                    await self._claim(keys=keys, args=args, client=pipe)  # queued
                claimed = await pipe.execute()
            ending = [
                self._end_upstream(session_id, sealed, target, options)
                for session_id, sealed in zip(ids, claimed, strict=True)
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
                with contextlib.suppress(Exception):  # Redis away: the next period
                    await self._refresh_all(held)
        finally:
            self._refresher = None

    async def _refresh_all(self, held: set[str]) -> None:
        now = _now_ms()
        async with self.client.pipeline(transaction=False) as pipe:
            for session_id in held:
                keys = [session_key(self.service, session_id), self.key(session_id), self.index]
                args = [session_id, now, self.grace_ms]
                await self._refresh_one(keys=keys, args=args, client=pipe)  # queued
            await pipe.execute()

    def stop(self) -> None:
        for task in (self._refresher, self._sweeper):
            if task is not None:
                task.cancel()
        self._sweeper = None


def _now_ms() -> int:
    """Epoch milliseconds, as the session store scores its own expiry index."""
    return round(time.time() * 1000)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


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
    return SharedUpstreams(state.client, state.prefix, keys, ttl, name or "")
