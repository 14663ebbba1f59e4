"""Change notifications from a 2026-07-28 upstream, for clients that expect them unasked.

A 2026-07-28 server sends `list_changed` and `resources/updated` only on a
`subscriptions/listen` request held open; a handshake-era server sends `list_changed` to every
session, and `resources/updated` after `resources/subscribe`. So, in front of a 2026-07-28
upstream, each upstream client of the proxy keeps one listen open for the lists (what the
upstream acknowledges), and a handshake-era client's `resources/subscribe` becomes a listen for
that URI (`resources/unsubscribe` ends it). What arrives goes where every upstream notification
goes (the owning session; for the shared client, the proxy's own listeners).

A 2026-07-28 client's own `subscriptions/listen` naming resource URIs is served by the proxy
(its listens hear what the shared upstream client hears): `ResourceWatch` subscribes the
shared client to each URI once, in the upstream's era, for as long as any listen names it.
"""

from __future__ import annotations

import asyncio

from mcpkit.client import Client, Era
from mcpkit.client.listen import Subscription


class UpstreamListening:
    """The `subscriptions/listen` requests one upstream client holds open."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self._resources: dict[str, Subscription] = {}

    async def lists(self) -> None:
        """Listen for the tools, prompts and resources list_changed the upstream offers
        (raises what `Subscription.__aenter__` raises)."""
        await self.client.listen(tools=True, prompts=True, resources=True).__aenter__()

    async def subscribe(self, uri: str) -> None:
        """`resources/subscribe` in the handshake era's sense: updates of `uri` until
        `unsubscribe` (a second subscription to one URI changes nothing)."""
        if uri in self._resources:
            return
        subscription = self.client.listen(resource_uris=[uri])
        await subscription.__aenter__()
        self._resources[uri] = subscription

    async def unsubscribe(self, uri: str) -> None:
        subscription = self._resources.pop(uri, None)
        if subscription is not None:
            await subscription.close()


class ResourceWatch:
    """The resource URIs the proxy's 2026-07-28 listens follow, each subscribed upstream once
    on the shared client while a listen names it (its own upstream listens, apart from those
    a handshake-era session's resources/subscribe holds)."""

    def __init__(self) -> None:
        self._count: dict[str, int] = {}
        self._held: dict[str, Subscription] = {}  # a 2026-07-28 upstream's listen per URI
        self._lock = asyncio.Lock()  # one upstream (un)subscribe at a time

    def following(self) -> list[str]:
        """The URIs subscribed upstream now."""
        return sorted(self._count)

    async def acquire(self, client: Client, uri: str) -> bool:
        """Follow `uri` (subscribed upstream by the first listen that names it); False when
        the upstream did not acknowledge it. Raises what the upstream's resources/subscribe
        or subscriptions/listen raises."""
        async with self._lock:
            if uri not in self._count:
                if client.era is Era.PER_REQUEST:
                    subscription = client.listen(resource_uris=[uri])
                    await subscription.__aenter__()
                    if uri not in (subscription.acknowledged.get("resourceSubscriptions") or ()):
                        await subscription.close()
                        return False
                    self._held[uri] = subscription
                else:
                    await client.subscribe_resource(uri)
            self._count[uri] = self._count.get(uri, 0) + 1
            return True

    async def release(self, client: Client, uri: str) -> None:
        """A listen that named `uri` ended (the last one unsubscribes upstream)."""
        async with self._lock:
            left = self._count.get(uri, 0) - 1
            if left > 0:
                self._count[uri] = left
                return
            self._count.pop(uri, None)
            held = self._held.pop(uri, None)
            if held is not None:
                await held.close()
            elif client.era is not Era.PER_REQUEST:
                await client.unsubscribe_resource(uri)
