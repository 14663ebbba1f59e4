"""`RedisBus`: the bus between workers (stores/bus.py) over Redis publish/subscribe.

Every worker of a service (the same `prefix`) subscribes to one channel, `{prefix}bus`; the
bus's typed channels travel inside it. Each burst of messages is published in one pipeline
(one round trip). A worker that lost its subscription (Redis restarted) subscribes again,
logging the loss once and the return once; what was published meanwhile is lost to it.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from mcpkit.stores.bus import BufferedBus
from mcpkit.stores.redis_client import Unavailable, is_failure

__all__ = ["RedisBus"]

logger = logging.getLogger("mcpkit.stores")
_RECONNECT = (0.1, 0.5, 1.0, 2.0)  # seconds between attempts to subscribe again
_UNAVAILABLE = Unavailable("the workers' bus")


class RedisBus(BufferedBus):
    """The bus on the channel `{prefix}bus` of the `redis.asyncio.Redis` `client`."""

    def __init__(self, client: Any, prefix: str) -> None:
        super().__init__()
        self.client = client
        self.channel = prefix + "bus"
        self._listener: asyncio.Task[None] | None = None
        self._subscribed: asyncio.Future[None] | None = None

    async def start(self) -> None:
        """Subscribe (once); returns when subscribed, so nothing published after is missed.
        Raises StoreUnavailable when Redis cannot be reached."""
        if self._listener is None:
            loop = asyncio.get_running_loop()
            self._subscribed = loop.create_future()
            self._listener = loop.create_task(self._listen())
        assert self._subscribed is not None
        with _UNAVAILABLE:
            await asyncio.shield(self._subscribed)

    async def stop(self) -> None:
        await self.flush()
        listener, self._listener = self._listener, None
        if listener is not None:
            listener.cancel()
            await asyncio.gather(listener, return_exceptions=True)

    async def _send(self, burst: list[bytes]) -> None:
        async with self.client.pipeline(transaction=False) as pipe:
            for data in burst:
                pipe.publish(self.channel, data)
            await pipe.execute()

    async def _listen(self) -> None:
        attempt = 0
        while True:
            pubsub = self.client.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.subscribe(self.channel)
                if attempt:
                    logger.warning("joined the other workers' channel again")
                attempt = 0
                self._now_subscribed(None)
                async for message in pubsub.listen():
                    self._receive(message.get("data"))
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # Redis away (or a bug, logged as one): retried
                if not is_failure(exc):
                    logger.exception("the other workers' channel failed")
                self._now_subscribed(exc)
                if not attempt:  # once per outage, not once per retry
                    name = type(exc).__name__
                    logger.warning("lost the other workers' channel (%s); retrying", name)
                await asyncio.sleep(_RECONNECT[min(attempt, len(_RECONNECT) - 1)])
                attempt += 1
            finally:
                await _close(pubsub)

    def _now_subscribed(self, failure: Exception | None) -> None:
        """The first attempt's outcome goes to `start`; later starts do not wait again."""
        subscribed = self._subscribed
        if subscribed is None or subscribed.done():
            return
        if failure is None:
            subscribed.set_result(None)
            return
        subscribed.set_exception(failure)
        self._subscribed = asyncio.get_running_loop().create_future()
        self._subscribed.set_result(None)


async def _close(pubsub: Any) -> None:
    """Close a subscription; a failing Redis (logged by the listener already) is no news."""
    try:
        await pubsub.aclose()
    except Exception as exc:
        if not is_failure(exc):
            logger.exception("could not close the subscription to the other workers")
