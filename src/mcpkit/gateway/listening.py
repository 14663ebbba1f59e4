"""Change notifications from a 2026-07-28 upstream, for clients that expect them unasked.

A 2026-07-28 server sends `list_changed` and `resources/updated` only on a
`subscriptions/listen` request held open; a handshake-era server sends `list_changed` to every
session, and `resources/updated` after `resources/subscribe`. So, in front of a 2026-07-28
upstream, each upstream client of the proxy keeps one listen open for the lists (what the
upstream acknowledges), and a handshake-era client's `resources/subscribe` becomes a listen for
that URI (`resources/unsubscribe` ends it). What arrives goes where every upstream notification
goes (the owning session; for the shared client, the proxy's own listeners).
"""

from __future__ import annotations

from mcpkit.client import Client
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
