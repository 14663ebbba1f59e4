"""The bus between workers keeps one contract in this process (`MemoryBus`, several workers on
one hub) and in Redis (`RedisBus`, a real redis-server): typed channels each owner registers,
messages in the order published and never back to their publisher, a channel nobody
registered logged once and dropped, a `stored_first` message after what `before` waits for.
A failed Redis is StoreUnavailable at start and one log line per outage while publishing."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest

from mcpkit.stores import StoreUnavailable
from mcpkit.stores.bus import Bus, Channel, MemoryBus, MemoryHub
from mcpkit.stores.redis_bus import RedisBus
from mcpkit.stores.redis_client import connect
from tests.http.servers import unused_port
from tests.peers import redis_server


@dataclass(frozen=True)
class Note:
    n: int
    text: str


def _note(body: dict[str, Any]) -> Note | None:
    n, text = body.get("n"), body.get("t")
    return Note(n, text) if type(n) is int and type(text) is str else None


NOTES: Channel[Note] = Channel("test.notes", lambda m: {"n": m.n, "t": m.text}, _note)
IDS: Channel[str] = Channel("test.ids", lambda s: {"s": s}, lambda b: b.get("s"))
UNHEARD: Channel[str] = Channel("test.unheard", lambda s: {"s": s}, lambda b: b.get("s"))


@pytest.fixture(params=["memory", "redis"])
async def buses(request: pytest.FixtureRequest, redis_url: str) -> AsyncIterator[list[Bus]]:
    """Three workers' buses, started."""
    made: list[Any] = []
    clients: list[Any] = []
    if request.param == "memory":
        hub = MemoryHub()
        made = [MemoryBus(hub) for _ in range(3)]
    else:
        prefix = f"test:{request.node.name}:"
        clients = [connect(redis_url, timeout=2) for _ in range(3)]
        made = [RedisBus(client, prefix) for client in clients]
    for bus in made:
        await bus.start()
    yield made
    for bus in made:
        await bus.stop()
    for client in clients:
        await client.aclose()


class Heard:
    """What one handler was handed, and a wait until it holds `count` messages."""

    def __init__(self) -> None:
        self.items: list[Any] = []
        self._changed = asyncio.Event()

    def __call__(self, message: Any) -> None:
        self.items.append(message)
        self._changed.set()

    async def until(self, count: int) -> list[Any]:
        async with asyncio.timeout(5):
            while len(self.items) < count:
                self._changed.clear()
                await self._changed.wait()
        return self.items


async def test_messages_arrive_typed_in_order_on_every_other_worker(buses: list[Bus]) -> None:
    first, second, third = buses
    heard = [Heard() for _ in buses]
    for bus, handler in zip(buses, heard, strict=True):
        bus.register(NOTES, handler)
    for n in range(200):
        first.publish(NOTES, Note(n, f"note {n}"))
        if n % 50 == 0:
            await asyncio.sleep(0)  # several bursts, not one
    wanted = [Note(n, f"note {n}") for n in range(200)]
    assert await heard[1].until(200) == wanted
    assert await heard[2].until(200) == wanted
    await second.flush()
    third.publish(NOTES, Note(-1, "from the third"))  # the marker: the first hears only this
    assert await heard[0].until(1) == [Note(-1, "from the third")]


async def test_each_channel_goes_to_its_own_handler(buses: list[Bus]) -> None:
    first, second, _ = buses
    notes, ids = Heard(), Heard()
    second.register(NOTES, notes)
    second.register(IDS, ids)
    first.publish(IDS, "a")
    first.publish(NOTES, Note(1, "one"))
    first.publish(IDS, "b")
    assert await ids.until(2) == ["a", "b"]
    assert await notes.until(1) == [Note(1, "one")]
    with pytest.raises(ValueError, match="registered already"):
        second.register(IDS, ids)


async def test_a_channel_nobody_registered_is_logged_once_and_dropped(
    buses: list[Bus], caplog: pytest.LogCaptureFixture
) -> None:
    first, second, third = buses
    heard = [Heard(), Heard()]
    second.register(IDS, heard[0])
    third.register(IDS, heard[1])
    with caplog.at_level(logging.WARNING, logger="mcpkit.stores"):
        first.publish(UNHEARD, "x")
        first.publish(UNHEARD, "y")
        first.publish(IDS, "after")  # the channel goes on after what it dropped
        for each in heard:
            assert await each.until(1) == ["after"]
    lines = [r.getMessage() for r in caplog.records if "test.unheard" in r.getMessage()]
    assert len(lines) == 2  # once on each worker that heard it: the second and the third


async def test_a_stored_first_message_leaves_after_what_before_waits_for(
    buses: list[Bus],
) -> None:
    first, second, _ = buses
    ids = Heard()
    stored = asyncio.Event()

    async def before() -> None:
        await stored.wait()
        ids.items.append("stored")

    first.before = before
    second.register(IDS, ids)
    first.publish(IDS, "plain")  # no wait for `before`
    assert await ids.until(1) == ["plain"]
    first.publish(IDS, "stored first", stored_first=True)
    first.publish(IDS, "same burst")
    for _ in range(20):  # the writer runs until `before`, and waits there
        await asyncio.sleep(0)
    assert ids.items == ["plain"]
    stored.set()
    assert await ids.until(4) == ["plain", "stored", "stored first", "same burst"]


async def test_an_unreachable_redis_is_store_unavailable_at_start() -> None:
    client = connect(f"redis://:hunter2@127.0.0.1:{unused_port()}/0", timeout=1)
    bus = RedisBus(client, "test:")
    try:
        with pytest.raises(StoreUnavailable, match="bus") as caught:
            await bus.start()
        assert "hunter2" not in str(caught.value)
    finally:
        await bus.stop()
        await client.aclose()


async def test_messages_lost_while_redis_is_away_are_logged_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with redis_server() as url:
        client = connect(url, timeout=1)
        bus = RedisBus(client, "test:")
        await bus.start()
    try:
        with caplog.at_level(logging.WARNING, logger="mcpkit.stores"):
            for n in range(3):  # three bursts, one outage
                bus.publish(IDS, str(n))
                await bus.flush()
        lines = [r.getMessage() for r in caplog.records if "could not tell" in r.getMessage()]
        assert len(lines) == 1 and "ConnectionError" in lines[0]
    finally:
        await bus.stop()
        await client.aclose()
