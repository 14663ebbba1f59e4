"""While one worker opens a downstream session's upstream session, the others wait on a lease
(gateway/resume.py); a worker slower than the lease's ttl, whose lease another worker took
meanwhile, must not end that worker's lease when it gives up (issue 35: the lock was deleted
without checking it was still its own, so a third worker opened yet another upstream session).

In process, with the in-process twins of the stores (stores/lease.py, upstream_sessions.py)
shared by two `SharedUpstreams` as two workers would share Redis; the lease's clock is moved
by hand, and the upstream handshakes are stand-ins the test holds and fails."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import pytest

from mcpkit.client import ClientOptions
from mcpkit.gateway.resume import OPENING_WAIT, SharedUpstreams
from mcpkit.server.request_state import RequestStateKeys
from mcpkit.stores.lease import MemoryLease
from mcpkit.stores.upstream_sessions import MemoryUpstreamSessions
from tests.clock import FakeClock

URL = "http://127.0.0.1:9/mcp"  # never reached: the handshakes are the test's


@dataclass(frozen=True)
class Transport:
    session_id: str


@dataclass(frozen=True)
class Peer:
    transport: Transport


class RecordingLease(MemoryLease):
    """The in-process lease, recording each release: (key, owner, whether it was theirs)."""

    def __init__(self, clock: FakeClock) -> None:
        super().__init__(clock=clock)
        self.released: list[tuple[str, str, bool]] = []

    async def release(self, key: str, owner: str) -> bool:
        released = await super().release(key, owner)
        self.released.append((key, owner, released))
        return released


class Handshake:
    """A stand-in for opening an upstream client: starts, then fails when told."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.fail = asyncio.Event()

    async def __call__(self, options: ClientOptions) -> Any:
        self.started.set()
        await self.fail.wait()
        raise ConnectionError("the upstream is unreachable")


async def test_a_late_worker_giving_up_leaves_the_next_workers_lease() -> None:
    clock = FakeClock(1000.0)
    lease = RecordingLease(clock)
    records = MemoryUpstreamSessions(lambda _id: None, grace=5.0)
    keys = RequestStateKeys(["upstream-opening-tests-key"])
    one, two = (SharedUpstreams(records, lease, keys, None, "notes") for _ in range(2))
    peer = Peer(Transport("session-1"))  # one downstream session, served by both workers
    first, second = Handshake(), Handshake()

    opening_one = asyncio.ensure_future(one.open(peer, URL, ClientOptions(), first))
    await first.started.wait()
    clock.advance(OPENING_WAIT + 1)  # worker one's handshake outlives its lease
    opening_two = asyncio.ensure_future(two.open(peer, URL, ClientOptions(), second))
    await second.started.wait()  # worker two took the lease and opens

    first.fail.set()
    with pytest.raises(ConnectionError):
        await opening_one
    ((key, _, released),) = lease.released
    assert not released  # not worker one's any more
    assert not await lease.acquire(key, "a third worker", OPENING_WAIT)  # still worker two's

    second.fail.set()
    with pytest.raises(ConnectionError):
        await opening_two
    assert lease.released[1][2]  # worker two's own release ended it
    assert await lease.acquire(key, "a third worker", OPENING_WAIT)
