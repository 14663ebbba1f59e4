"""`RedisBus`: what one worker tells the others, over Redis publish/subscribe.

Every worker of a service (every `RedisState` with the same prefix) subscribes to one
channel, `{prefix}bus`, and publishes there what another worker may have to act on:

- an answer from the client to a request of ours that this worker did not send (the client
  POSTed it here; the worker whose handler waits for it takes it);
- a message for a session's GET stream, made on a worker where that stream is not open
  (the worker where it is open sends it; the one that made it stored it for a resume);
- that a session's GET stream opened here (elsewhere, the copies stop keeping its messages);
- a server fan-out event (a list changed, a resource was updated, a task moved), told by
  every other worker to its own clients.

Publishing never waits (it is called from synchronous code): messages gather in a buffer and
one task writes each burst in one pipeline, in order; a burst with a message published
`stored_first` leaves after what `before` waits for (the SSE events this worker stored until
then: another worker hears of a message for a GET stream after it is stored). Delivery is
at most once: a message published while a worker is reconnecting to Redis is lost to that
worker (logged).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

import orjson

logger = logging.getLogger("mcpkit.http")

Handler = Callable[[dict[str, Any]], None]
_RECONNECT = (0.1, 0.5, 1.0, 2.0)  # seconds between attempts to subscribe again


class RedisBus:
    """The channel `{prefix}bus` of the Redis `client` (see the module docstring). `handlers`
    by message kind; a message this worker published is not handed back to it."""

    def __init__(self, client: Any, prefix: str) -> None:
        self.client = client
        self.channel = prefix + "bus"
        self.worker = secrets.token_hex(8)
        self.handlers: dict[str, Handler] = {}
        self._buffer: list[bytes] = []
        self._writer: asyncio.Task[None] | None = None
        self._listener: asyncio.Task[None] | None = None
        self._subscribed: asyncio.Future[None] | None = None
        self.before: Callable[[], Awaitable[None]] | None = None
        self._wait = False  # the buffer holds a message published `stored_first`

    async def start(self) -> None:
        """Subscribe (once); returns when subscribed, so nothing published after is missed.
        Raises what redis-py raises when Redis cannot be reached."""
        if self._listener is None:
            loop = asyncio.get_running_loop()
            self._subscribed = loop.create_future()
            self._listener = loop.create_task(self._listen())
        assert self._subscribed is not None
        await asyncio.shield(self._subscribed)

    def publish(self, kind: str, message: dict[str, Any], *, stored_first: bool = False) -> None:
        message["k"] = kind
        message["w"] = self.worker
        self._buffer.append(orjson.dumps(message))
        self._wait |= stored_first
        if self._writer is None:
            self._writer = asyncio.get_running_loop().create_task(self._write())

    async def flush(self) -> None:
        while self._writer is not None:
            await asyncio.shield(self._writer)

    async def stop(self) -> None:
        await self.flush()
        listener, self._listener = self._listener, None
        if listener is not None:
            listener.cancel()
            await asyncio.gather(listener, return_exceptions=True)

    async def _write(self) -> None:
        try:
            while self._buffer:
                if self._wait and self.before is not None:
                    self._wait = False
                    await self.before()  # (it does not raise: a failed write is logged)
                burst, self._buffer = self._buffer, []
                try:
                    async with self.client.pipeline(transaction=False) as pipe:
                        for data in burst:
                            pipe.publish(self.channel, data)
                        await pipe.execute()
                except Exception as exc:  # Redis away: these messages are lost, go on
                    logger.warning(
                        "could not tell the other workers %d messages: %s",
                        len(burst),
                        type(exc).__name__,
                    )
        finally:
            self._writer = None

    async def _listen(self) -> None:
        attempt = 0
        while True:
            pubsub = self.client.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.subscribe(self.channel)
                if attempt:
                    logger.warning("joined the other workers' channel again")
                attempt = 0
                if self._subscribed is not None and not self._subscribed.done():
                    self._subscribed.set_result(None)
                async for message in pubsub.listen():
                    self._dispatch(message.get("data"))
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if self._subscribed is not None and not self._subscribed.done():
                    self._subscribed.set_exception(exc)
                    self._subscribed = asyncio.get_running_loop().create_future()
                    self._subscribed.set_result(None)  # later starts do not wait again
                if not attempt:  # once per outage, not once per retry
                    name = type(exc).__name__
                    logger.warning("lost the other workers' channel (%s); retrying", name)
                await asyncio.sleep(_RECONNECT[min(attempt, len(_RECONNECT) - 1)])
                attempt += 1
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()

    def _dispatch(self, data: Any) -> None:
        if not isinstance(data, (bytes, str)):
            return
        try:
            message = orjson.loads(data)
        except orjson.JSONDecodeError:
            return
        if type(message) is not dict or message.get("w") == self.worker:
            return
        handler = self.handlers.get(message.get("k"))  # type: ignore[arg-type]
        if handler is None:
            return  # a kind a newer worker knows
        try:
            handler(message)
        except Exception:  # one bad message must not stop the channel
            logger.exception("a message from another worker could not be handled")
