"""`client.listen(...)`: subscriptions/listen (2026-07-28) demultiplexed by subscription id on
one channel, the acknowledgement awaited first, cancellation on exit, a graceful end; and the
same loop over the handshake era's list_changed / resources/subscribe (our own server).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import orjson
import pytest

from mcpkit import Client, Server
from mcpkit.client import era as era_module
from mcpkit.client.listen import Notification
from mcpkit.errors import ConnectionClosed, RequestTimeout
from mcpkit.protocol import Outgoing
from mcpkit.transports.memory import memory_pair

JSONObject = dict[str, Any]
SUB = "io.modelcontextprotocol/subscriptionId"
LISTEN = "subscriptions/listen"
DISCOVERED: JSONObject = {
    "resultType": "complete",
    "supportedVersions": ["2026-07-28"],
    "capabilities": {"tools": {"listChanged": True}, "resources": {"subscribe": True}},
}  # prompts are not declared: a listen for them alone is refused by the client


@pytest.fixture(autouse=True)
def fresh_era_cache() -> Iterator[None]:
    era_module.ERAS.clear()
    yield
    era_module.ERAS.clear()


class ListenServer:
    """A raw modern peer: acknowledges each listen (without resourcesListChanged: not
    honoured), then sends what the test pushes, tagged with the subscription id."""

    def __init__(self, *, acknowledge: bool = True, missing_listen: bool = False) -> None:
        self.acknowledge = acknowledge
        self.missing_listen = missing_listen
        self.seen: list[JSONObject] = []
        self.listens: dict[Any, JSONObject] = {}
        self.opened = asyncio.Event()
        self._arrived = asyncio.Event()
        self.client_end, self._end = memory_pair()
        self._task = asyncio.get_running_loop().create_task(self._serve())

    async def _serve(self) -> None:
        while (data := await self._end.read()) is not None:
            message = orjson.loads(data)
            self.seen.append(message)
            self._arrived.set()
            method, request_id = message.get("method"), message.get("id")
            if method == "server/discover":
                self._send({"id": request_id, "result": DISCOVERED})
            elif method == LISTEN and self.missing_listen:
                error = {"code": -32601, "message": "Method not found"}
                self._send({"id": request_id, "error": error})
            elif method == LISTEN:
                wanted = dict(message["params"]["notifications"])
                wanted.pop("resourcesListChanged", None)
                self.listens[request_id] = wanted
                if not self.acknowledge:
                    continue
                self.push(
                    request_id,
                    "notifications/subscriptions/acknowledged",
                    {"notifications": wanted},
                )
                self.opened.set()
            elif request_id is not None:
                self._send({"id": request_id, "result": {"resultType": "complete"}})

    def _send(self, message: JSONObject) -> None:
        self._end.write([Outgoing(orjson.dumps({"jsonrpc": "2.0", **message}))])

    def push(self, subscription: Any, method: str, params: JSONObject | None = None) -> None:
        params = {**(params or {}), "_meta": {SUB: subscription}}
        self._send({"method": method, "params": params})

    def end(self, subscription: Any) -> None:
        result = {"resultType": "complete", "_meta": {SUB: subscription}}
        self._send({"id": subscription, "result": result})

    async def drop(self) -> None:
        """Close the connection without a word (a crash, a network failure)."""
        await self._end.close()

    async def cancellations(self, count: int) -> list[Any]:
        """Wait (at most 5 s) until `count` notifications/cancelled have arrived; their ids."""
        async with asyncio.timeout(5):
            while len(self.cancelled()) < count:
                self._arrived.clear()
                await self._arrived.wait()
        return self.cancelled()

    def cancelled(self) -> list[Any]:
        return [
            m["params"]["requestId"]
            for m in self.seen
            if m.get("method") == "notifications/cancelled"
        ]


async def next_of(sub: Any) -> Notification:
    return await asyncio.wait_for(sub.__anext__(), 2)


async def test_two_subscriptions_on_one_channel_are_told_apart_by_id() -> None:
    server = ListenServer()
    seen_by_callback: list[str] = []
    async with Client(
        server.client_end, mode="auto", on_list_changed=seen_by_callback.append
    ) as client:
        async with (
            client.listen(tools=True, resources=True) as tools,
            client.listen(resource_uris=["file:///a"]) as files,
        ):
            assert tools.acknowledged == {"toolsListChanged": True}  # resources not honoured
            assert files.acknowledged == {"resourceSubscriptions": ["file:///a"]}
            assert tools.id != files.id
            server.push(files.id, "notifications/resources/updated", {"uri": "file:///a"})
            server.push(tools.id, "notifications/tools/list_changed")
            note = await next_of(tools)
            assert note.method == "notifications/tools/list_changed"
            note = await next_of(files)
            assert note == Notification(
                "notifications/resources/updated", {"uri": "file:///a", "_meta": {SUB: files.id}}
            )
            server.push("someone-else", "notifications/tools/list_changed")  # not ours
        assert sorted(await server.cancellations(2)) == sorted([tools.id, files.id])
    assert seen_by_callback == ["tools", "tools"]  # the callbacks see every list_changed
    listens = [m for m in server.seen if m.get("method") == "subscriptions/listen"]
    assert listens[0]["params"]["notifications"] == {
        "toolsListChanged": True,
        "resourcesListChanged": True,
    }
    assert listens[0]["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"]


async def test_a_graceful_server_end_finishes_the_iteration() -> None:
    server = ListenServer()
    async with Client(server.client_end, mode="auto") as client:
        async with client.listen(tools=True) as sub:
            server.push(sub.id, "notifications/tools/list_changed")
            server.end(sub.id)
            got = [note.method async for note in sub]
            assert got == ["notifications/tools/list_changed"]
        assert server.cancelled() == []  # already over: nothing to cancel


async def test_a_dropped_connection_ends_the_iteration_with_an_error() -> None:
    server = ListenServer()
    client = Client(server.client_end, mode="auto")
    async with client, client.listen(tools=True) as sub:
        await server.drop()
        with pytest.raises(ConnectionClosed):
            await next_of(sub)


async def test_no_acknowledgement_in_time_is_a_timeout_and_the_listen_is_cancelled() -> None:
    server = ListenServer(acknowledge=False)
    async with Client(server.client_end, mode="auto", timeout=0.3) as client:
        with pytest.raises(RequestTimeout, match="acknowledgement"):
            async with client.listen(tools=True):
                pytest.fail("not acknowledged")
        assert await server.cancellations(len(server.listens)) == list(server.listens)


# -- the handshake era: the same loop -----------------------------------------------------


async def test_legacy_listen_maps_onto_list_changed_and_resource_subscriptions() -> None:
    server = Server("legacy-listen")

    @server.tool()
    def first() -> str:
        """One."""
        return "1"

    @server.resource("file:///watched")
    def watched() -> str:
        return "w"

    async with Client(server, mode="handshake") as client:
        assert client.era == "handshake"
        async with client.listen(
            tools=True, prompts=True, resource_uris=["file:///watched"]
        ) as sub:
            assert sub.acknowledged.get("toolsListChanged") is True
            assert "promptsListChanged" not in sub.acknowledged or client.supports(
                "prompts", "listChanged"
            )

            @server.tool()
            def second() -> str:
                """Two."""
                return "2"

            note = await next_of(sub)
            assert note.method == "notifications/tools/list_changed"
            assert sub.acknowledged["resourceSubscriptions"] == ["file:///watched"]
            server.resources.notify_updated("file:///watched")
            note = await next_of(sub)
            assert note == Notification(
                "notifications/resources/updated", {"uri": "file:///watched"}
            )
        unsubscribed = server.resources.notify_updated("file:///watched")
        assert unsubscribed == 0  # unsubscribed on exit


async def test_a_filter_the_server_declared_nothing_for_is_acknowledged_empty() -> None:
    # Issue 22 item 3: what the server cannot deliver is left out of `acknowledged`, in both
    # eras, never an error; nothing is sent when the capabilities cover none of it.
    server = ListenServer()
    async with Client(server.client_end, mode="2026-07-28", timeout=5) as client:
        async with client.listen(prompts=True) as sub:
            assert sub.acknowledged == {}
        # Part of a filter the server can serve: the server acknowledges what it honours.
        async with client.listen(prompts=True, tools=True) as sub:
            assert sub.acknowledged == {"promptsListChanged": True, "toolsListChanged": True}
    sent = [m["params"]["notifications"] for m in server.seen if m.get("method") == LISTEN]
    assert sent == [{"promptsListChanged": True, "toolsListChanged": True}]


async def test_the_same_in_the_handshake_era() -> None:
    server = Server("tools only")

    @server.tool()
    def noop() -> str:
        return ""

    async with Client(server, mode="handshake") as client:
        async with client.listen(resource_uris=["memo://a"]) as sub:
            assert sub.acknowledged == {}
        async with client.listen(tools=True, resource_uris=["memo://a"]) as sub:
            assert sub.acknowledged == {"toolsListChanged": True}


async def test_a_server_answering_listen_with_method_not_found() -> None:
    server = ListenServer(missing_listen=True)
    async with Client(server.client_end, mode="2026-07-28", timeout=5) as client:
        async with client.listen(tools=True) as sub:
            assert sub.acknowledged == {}  # it can deliver none of it
        assert [note async for note in sub] == []  # closed: the iteration ends
        assert await client.request("tools/list") == {"resultType": "complete"}  # still serving


async def test_a_subscription_with_nothing_to_hear_ends_when_the_client_closes() -> None:
    # Whether nothing was sent (undeclared) or the server has no subscriptions/listen, the
    # loop over an empty subscription must not outlive the client (a Host watches it).
    for server, filters in (
        (ListenServer(), {"prompts": True}),
        (ListenServer(missing_listen=True), {"tools": True}),
    ):
        client = Client(server.client_end, mode="2026-07-28", timeout=5)
        async with client, client.listen(**filters) as sub:
            assert sub.acknowledged == {}
            loop = asyncio.get_running_loop().create_task(anext(aiter(sub), None))
            await client.close()
            assert await asyncio.wait_for(loop, 5) is None
