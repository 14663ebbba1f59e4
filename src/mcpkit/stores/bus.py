"""The bus between workers: what one worker tells the others, on typed channels.

Each owner of a kind of message (the HTTP sessions, the fan-out of a server, the gateway's
home calls) makes a `Channel`: a name, unique on the bus, and how its own message type travels
(`encode` to a JSON object, `decode` back; None for a malformed one). It registers a handler
for the channel and publishes on it; the bus knows nothing else of what it carries.

    ANSWERS = Channel("http.answer", encode=..., decode=...)
    bus.register(ANSWERS, take_answer)
    bus.publish(ANSWERS, answer)

Behaviour every implementation keeps (`BufferedBus`): publishing never waits (it is called
from synchronous code): messages gather in a buffer and one task sends each burst, in order;
a burst holding a message published `stored_first` leaves after what `before` waits for (the
events this worker stored until then). A message is not handed back to the worker that
published it. Delivery is at most once: what is published while the bus is failing is lost
(logged once per outage). A message on a channel nobody here registered (a newer worker's) is
logged, once per channel, and dropped; a message its channel cannot decode is dropped.

`MemoryBus` is the in-process twin: the buses made on one `MemoryHub` are several workers in
one process. `RedisBus` (stores/redis_bus.py) is the one between processes.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

import orjson

from mcpkit.stores.redis_client import is_failure

__all__ = ["Bus", "BufferedBus", "Channel", "MemoryBus", "MemoryHub"]

logger = logging.getLogger("mcpkit.stores")
M = TypeVar("M")
JSONObject = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Channel(Generic[M]):
    """One kind of message on the bus: `name` (unique on a bus), `encode` (a message to a JSON
    object), `decode` (back; None when the object is not one of its messages)."""

    name: str
    encode: Callable[[M], JSONObject]
    decode: Callable[[JSONObject], M | None]


class Bus(Protocol):
    """What the workers of one service tell each other (see the module docstring)."""

    worker: str  # this worker's id on the bus (random)
    before: Callable[[], Awaitable[None]] | None  # waited for before a `stored_first` burst

    def register(self, channel: Channel[M], handler: Callable[[M], None]) -> None:
        """Hand this worker the messages of `channel` the others publish. Raises ValueError
        when a channel of that name is registered already."""
        ...

    def publish(self, channel: Channel[M], message: M, *, stored_first: bool = False) -> None:
        """Tell the other workers `message`, in order, without waiting."""
        ...

    async def start(self) -> None:
        """Listen; returns when nothing published after can be missed. Raises
        StoreUnavailable when the bus cannot be reached."""
        ...

    async def flush(self) -> None:
        """Until what was published so far is sent (or lost)."""
        ...

    async def stop(self) -> None:
        """Flush, then stop listening."""
        ...


class BufferedBus:
    """The buffering, ordering and dispatch every bus shares; a subclass sends a burst of
    encoded messages (`_send`, raising on failure) and feeds what it hears to `_receive`."""

    def __init__(self) -> None:
        self.worker = secrets.token_hex(8)
        self.before: Callable[[], Awaitable[None]] | None = None
        self._channels: dict[str, tuple[Channel[Any], Callable[[Any], None]]] = {}
        self._buffer: list[bytes] = []
        self._wait = False  # the buffer holds a message published `stored_first`
        self._writer: asyncio.Task[None] | None = None
        self._lost: int | None = None  # messages lost since sending failed (None: it works)
        self._unknown: set[str] = set()  # channels nobody registered, logged once each

    def register(self, channel: Channel[M], handler: Callable[[M], None]) -> None:
        if channel.name in self._channels:
            raise ValueError(f"the bus channel {channel.name!r} is registered already")
        self._channels[channel.name] = (channel, handler)

    def publish(self, channel: Channel[M], message: M, *, stored_first: bool = False) -> None:
        body = channel.encode(message)
        self._buffer.append(orjson.dumps({"c": channel.name, "w": self.worker, "b": body}))
        self._wait |= stored_first
        if self._writer is None:
            self._writer = asyncio.get_running_loop().create_task(self._write())

    async def flush(self) -> None:
        while self._writer is not None:
            await asyncio.shield(self._writer)

    async def _send(self, burst: list[bytes]) -> None:
        raise NotImplementedError

    async def _write(self) -> None:
        try:
            while self._buffer:
                if self._wait and self.before is not None:
                    self._wait = False
                    await self.before()  # (it does not raise: a failed write is logged)
                burst, self._buffer = self._buffer, []
                try:
                    await self._send(burst)
                except Exception as exc:  # the bus failed: these messages are lost, go on
                    self._not_sent(burst, exc)
                else:
                    self._sent_again()
        finally:
            self._writer = None

    def _not_sent(self, burst: list[bytes], exc: Exception) -> None:
        if not is_failure(exc):
            logger.exception("could not tell the other workers %d messages", len(burst))
            return
        if self._lost is None:  # once per outage
            self._lost = 0
            name = type(exc).__name__
            logger.warning("could not tell the other workers (%s): messages are lost", name)
        self._lost += len(burst)

    def _sent_again(self) -> None:
        if self._lost is not None:
            logger.warning("telling the other workers again (%d messages were lost)", self._lost)
            self._lost = None

    def _receive(self, data: Any) -> None:
        """One message heard on the bus: to its channel's handler (see the module docstring)."""
        if not isinstance(data, (bytes, str)):
            return
        try:
            message = orjson.loads(data)
        except orjson.JSONDecodeError:
            return
        if type(message) is not dict or message.get("w") == self.worker:
            return
        name, body = message.get("c"), message.get("b")
        registered = self._channels.get(name) if type(name) is str else None
        if registered is None:
            self._unregistered(str(name))
            return
        channel, handler = registered
        decoded = channel.decode(body) if type(body) is dict else None
        if decoded is None:
            return
        try:
            handler(decoded)
        except Exception:  # one bad message must not stop the channel
            logger.exception("a message from another worker could not be handled")

    def _unregistered(self, name: str) -> None:
        if name not in self._unknown and len(self._unknown) < 100:
            self._unknown.add(name)
            logger.warning("dropped a message on the bus channel %r: not registered", name[:80])


class MemoryHub:
    """Where the `MemoryBus`es of several workers in one process meet."""

    def __init__(self) -> None:
        self.buses: list[MemoryBus] = []


class MemoryBus(BufferedBus):
    """A worker's bus in this process: it tells the other started buses of `hub`."""

    def __init__(self, hub: MemoryHub | None = None) -> None:
        super().__init__()
        self.hub = MemoryHub() if hub is None else hub

    async def start(self) -> None:
        if self not in self.hub.buses:
            self.hub.buses.append(self)

    async def stop(self) -> None:
        await self.flush()
        if self in self.hub.buses:
            self.hub.buses.remove(self)

    async def _send(self, burst: list[bytes]) -> None:
        for bus in list(self.hub.buses):
            if bus is not self:
                for data in burst:
                    bus._receive(data)
