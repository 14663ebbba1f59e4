"""subscriptions/listen (2026-07-28) on one in-memory channel, as on stdio: acknowledgement
first, notifications tagged with the subscription id, several subscriptions demultiplexed,
ended by notifications/cancelled or gracefully by the server."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

from mcpkit import Server
from mcpkit.errors import ConnectionClosed, ProtocolError
from mcpkit.protocol import Connection, ConnectionConfig, NotificationReceived
from mcpkit.protocol.per_request import SUBSCRIPTION_ID
from mcpkit.runtime import Session
from mcpkit.server.subscriptions import SubscriptionHub, honoured, parse_filter
from mcpkit.transports.memory import memory_pair

MODERN = "2026-07-28"
ACK = "notifications/subscriptions/acknowledged"
TOOLS_CHANGED = "notifications/tools/list_changed"


def make_server() -> tuple[Server, SubscriptionHub]:
    server = Server("subs", version="1.0.0")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    @server.resource("memo://one")
    def one() -> str:
        return "one"

    return server, server.subscriptions


class ModernPeer:
    """A client in 2026-07-28 mode on a memory pair; notifications grouped by subscription."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.seen: list[tuple[str, Any]] = []
        self.arrived = asyncio.Event()

    async def listen(self, request_id: int, **notifications: Any) -> asyncio.Task[dict[str, Any]]:
        """Open a subscription; the task ends with its completion result (or is cancelled)."""
        self.session.connection._outbound.next_id = request_id  # the subscription id: pick it
        task = asyncio.ensure_future(
            self.session.request("subscriptions/listen", {"notifications": notifications})
        )
        await asyncio.sleep(0)  # the request leaves with this id
        return task

    async def wait_for(self, count: int) -> list[tuple[str, Any]]:
        while len(self.seen) < count:
            self.arrived.clear()
            await asyncio.wait_for(self.arrived.wait(), 2)
        return self.seen

    def of(self, subscription: int) -> list[tuple[str, Any]]:
        return [
            (method, params)
            for method, params in self.seen
            if params["_meta"][SUBSCRIPTION_ID] == subscription
        ]


@contextlib.asynccontextmanager
async def modern_peer(server: Server) -> AsyncIterator[ModernPeer]:
    client_end, server_end = memory_pair()
    served = asyncio.create_task(server.serve(server_end))
    peer: ModernPeer

    def on_notification(session: Session, event: NotificationReceived) -> None:
        peer.seen.append((event.method, event.params))
        peer.arrived.set()

    config = ConnectionConfig(role="client", info={"name": "tester", "version": "9"})
    connection = Connection(config)
    connection.use_per_request(MODERN)
    session = Session(connection, client_end, on_notification=on_notification)
    peer = ModernPeer(session)
    session.start()
    try:
        yield peer
    finally:
        await session.close()
        await asyncio.wait_for(served, 2)


async def test_acknowledgement_first_then_tagged_notifications() -> None:
    server, hub = make_server()
    async with modern_peer(server) as peer:
        listening = await peer.listen(7, toolsListChanged=True, promptsListChanged=True)
        [(method, params)] = await peer.wait_for(1)
        assert method == ACK
        assert params["_meta"] == {SUBSCRIPTION_ID: 7}
        # no prompts registered: the server does not declare them, so they are not honoured
        assert params["notifications"] == {"toolsListChanged": True}
        assert len(hub) == 1
        server.add_tool(lambda: "x", name="later")
        assert hub.publish(TOOLS_CHANGED) == 1
        assert hub.publish("notifications/prompts/list_changed") == 0
        await peer.wait_for(2)
        assert peer.seen[1] == (TOOLS_CHANGED, {"_meta": {SUBSCRIPTION_ID: 7}})
        assert not listening.done()  # the subscription stays open
        assert hub.close_all() == 1
        result = await asyncio.wait_for(listening, 2)
        assert result["_meta"][SUBSCRIPTION_ID] == 7
        assert result["resultType"] == "complete"
        assert len(hub) == 0


async def test_concurrent_subscriptions_are_demultiplexed_by_id() -> None:
    server, hub = make_server()
    async with modern_peer(server) as peer:
        tools = await peer.listen(1, toolsListChanged=True)
        await peer.wait_for(1)
        memo = await peer.listen(2, resourceSubscriptions=["memo://one", "memo://two"])
        both = await peer.listen(3, toolsListChanged=True, resourceSubscriptions=["memo://one"])
        await peer.wait_for(3)
        assert peer.of(2)[0][1]["notifications"] == {
            "resourceSubscriptions": ["memo://one", "memo://two"]
        }
        assert hub.publish(TOOLS_CHANGED) == 2
        assert hub.resource_updated("memo://one") == 2
        assert hub.resource_updated("memo://two") == 1
        assert hub.resource_updated("memo://three") == 0
        await peer.wait_for(8)
        assert [m for m, _ in peer.of(1)] == [ACK, TOOLS_CHANGED]
        assert peer.of(2)[1:] == [
            ("notifications/resources/updated", {"_meta": {SUBSCRIPTION_ID: 2}, "uri": u})
            for u in ("memo://one", "memo://two")
        ]
        assert [m for m, _ in peer.of(3)] == [ACK, TOOLS_CHANGED, "notifications/resources/updated"]
        assert hub.close_all() == 3
        results = await asyncio.wait_for(asyncio.gather(tools, memo, both), 2)
        assert [r["_meta"][SUBSCRIPTION_ID] for r in results] == [1, 2, 3]


async def test_notifications_cancelled_ends_one_subscription() -> None:
    server, hub = make_server()
    async with modern_peer(server) as peer:
        first = await peer.listen(1, toolsListChanged=True)
        second = await peer.listen(2, toolsListChanged=True)
        await peer.wait_for(2)
        first.cancel()  # the client session sends notifications/cancelled for id 1
        with pytest.raises(asyncio.CancelledError):
            await first
        for _ in range(50):
            if len(hub) == 1:
                break
            await asyncio.sleep(0.01)
        assert len(hub) == 1
        assert hub.publish(TOOLS_CHANGED) == 1
        await peer.wait_for(3)
        assert peer.seen[2] == (TOOLS_CHANGED, {"_meta": {SUBSCRIPTION_ID: 2}})
        # the cancelled subscription got nothing more, not even a result
        assert [m for m, _ in peer.of(1)] == [ACK]
        hub.close_all()
        await asyncio.wait_for(second, 2)


async def test_a_malformed_filter_is_invalid_params() -> None:
    server, hub = make_server()
    async with modern_peer(server) as peer:
        for notifications in (
            None,
            {"toolsListChanged": "yes"},
            {"resourceSubscriptions": "memo://one"},
            {"resourceSubscriptions": [1]},
        ):
            params = {} if notifications is None else {"notifications": notifications}
            with pytest.raises(ProtocolError) as caught:
                await peer.session.request("subscriptions/listen", params)
            assert caught.value.code == -32602
        assert peer.seen == [] and len(hub) == 0


async def test_the_connection_closing_ends_subscriptions() -> None:
    server, hub = make_server()
    async with modern_peer(server) as peer:
        listening = await peer.listen(1, toolsListChanged=True)
        await peer.wait_for(1)
        assert len(hub) == 1
    with pytest.raises(ConnectionClosed):
        await listening
    for _ in range(50):
        if not len(hub):
            break
        await asyncio.sleep(0.01)
    assert len(hub) == 0
    assert hub.publish(TOOLS_CHANGED) == 0


async def test_aclose_all_waits_for_the_results() -> None:
    server, hub = make_server()
    async with modern_peer(server) as peer:
        listening = await peer.listen(4, toolsListChanged=True)
        await peer.wait_for(1)
        assert await hub.aclose_all() == 1
        assert len(hub) == 0
        assert (await asyncio.wait_for(listening, 2))["_meta"][SUBSCRIPTION_ID] == 4


def test_filter_rules() -> None:
    assert parse_filter({}) == (frozenset(), frozenset())
    flags, uris = parse_filter(
        {
            "toolsListChanged": True,
            "promptsListChanged": False,
            "future": 1,
            "resourceSubscriptions": ["a"],
        }
    )
    assert flags == {"toolsListChanged"} and uris == {"a"}
    everything = {
        "tools": {"listChanged": True},
        "prompts": {"listChanged": True},
        "resources": {"listChanged": True, "subscribe": True},
    }
    all_flags = frozenset({"toolsListChanged", "promptsListChanged", "resourcesListChanged"})
    assert honoured(all_flags, frozenset({"a"}), everything) == (all_flags, {"a"})
    assert honoured(all_flags, frozenset({"a"}), {"resources": {}}) == (frozenset(), frozenset())
    with pytest.raises(ValueError):
        SubscriptionHub().publish("notifications/message")
