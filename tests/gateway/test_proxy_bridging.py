"""Eras bridged through `ProxyServer` served over Streamable HTTP: what an upstream sends
reaches each downstream client as its own era has it (log messages on a 2026-07-28
request's stream, change notifications without the proxy's own subscription ids, the
tasks capability in the client's era, listens that deliver what they acknowledge)."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from mcpkit import Client
from mcpkit.gateway import proxy
from mcpkit.protocol.per_request import SUBSCRIPTION_ID
from tests.gateway.test_conformance import proxying  # `mcpkit proxy` over HTTP
from tests.gateway.test_proxy import sample_yes, text
from tests.http.servers import script_serving, serving

UPSTREAM_APP = Path(__file__).with_name("upstream_app.py")
OFFICIAL = [sys.executable, str(Path(__file__).parents[1] / "fixtures" / "official_full_server.py")]
TASK_UPSTREAM = [sys.executable, str(Path(__file__).with_name("task_upstream.py"))]


@contextlib.asynccontextmanager
async def proxied(target: Any, **options: Any) -> AsyncIterator[str]:
    """`proxy(target, **options)` served over Streamable HTTP; yields its /mcp URL."""
    async with serving(proxy(target, **options).http_app()) as base:
        yield base + "/mcp"


async def test_a_handshake_listen_hears_a_2026_upstreams_list_changed() -> None:
    """Through `mcpkit proxy`: the upstream's list_changed comes on the proxy's own upstream
    listen; it reaches the handshake-era session without that listen's subscription id,
    so `listen()` hears it."""
    raw: list[Any] = []
    with script_serving(UPSTREAM_APP, "http") as upstream, proxying(upstream, "per-request") as url:
        async with (
            Client(
                url, mode="handshake", timeout=30, on_notification=lambda *m: raw.append(m)
            ) as client,
            client.listen(tools=True) as subscription,
        ):
            assert client.era == "handshake"
            await client.call_tool("grow")
            note = await asyncio.wait_for(anext(aiter(subscription)), 10)
    assert note.method == "notifications/tools/list_changed"
    sent = [params for method, params in raw if method == note.method]
    assert sent and all(SUBSCRIPTION_ID not in (p or {}).get("_meta", {}) for p in sent)


async def test_a_handshake_client_is_told_the_handshake_tasks_of_an_upstream_of_both_eras() -> None:
    """Auto mode, an upstream of both eras: the shared upstream client speaks 2026-07-28 (no
    task listing) but a handshake-era session's own upstream session speaks the handshake
    era, so its client is told `tasks.list` and may list its tasks."""
    async with (
        proxied(TASK_UPSTREAM, mode="auto") as url,
        Client(url, mode="handshake", timeout=30) as client,
        Client(url, mode="per-request", timeout=30) as modern,
    ):
        assert client.server_capabilities["tasks"]["list"] == {}
        handle = await client.start_tool("forever", {})
        listed = await client.request("tasks/list", {})
        assert [task["taskId"] for task in listed["tasks"]] == [handle.task_id]
        await handle.cancel()
        assert "tasks" not in modern.server_capabilities  # the extension, in its era
        assert modern.supports("extensions", "io.modelcontextprotocol/tasks")


@pytest.mark.parametrize("upstream_era", ["handshake", "per-request"])
async def test_log_messages_reach_a_2026_client_on_its_requests_stream(upstream_era: str) -> None:
    """Through `mcpkit proxy`: a 2026-07-28 request that carries a logLevel runs on an
    upstream session leased to it; the upstream's log messages go to that request's
    stream, at the level it asked."""
    logs: list[Any] = []
    with script_serving(UPSTREAM_APP, "http") as upstream, proxying(upstream, upstream_era) as url:
        async with Client(url, mode="per-request", timeout=30, on_log=logs.append) as client:
            await client.call_tool("add", {"a": 1, "b": 1})
            assert logs == []  # no level asked: none sent
            await client.set_logging_level("info")
            assert text(await client.call_tool("add", {"a": 1, "b": 2})) == "3"
            await client.set_logging_level("error")
            await client.call_tool("add", {"a": 1, "b": 3})
    assert [entry.data for entry in logs] == ["adding 1 and 2"]


async def test_a_2026_listen_hears_a_list_change_its_own_call_caused_on_a_leased_session() -> None:
    """A client that declares sampling calls on an upstream session leased to it; the
    upstream tells only that session its tool list changed: the proxy's listens hear it
    all the same."""
    with script_serving(UPSTREAM_APP, "http") as upstream:
        async with (
            proxied(upstream, mode="handshake") as url,
            Client(url, mode="per-request", timeout=30, sampling=sample_yes) as client,
            client.listen(tools=True) as subscription,
        ):
            assert subscription.acknowledged == {"toolsListChanged": True}
            assert text(await client.call_tool("touch_tools", {})) == "touched"
            note = await asyncio.wait_for(anext(aiter(subscription)), 10)
    assert note.method == "notifications/tools/list_changed"


@pytest.mark.parametrize("upstream_era", ["handshake", "per-request"])
async def test_a_2026_listen_for_a_resource_delivers_its_updates(upstream_era: str) -> None:
    """The URIs of a listen are followed upstream before they are acknowledged; their
    updates arrive on the listen, and stop upstream once no listen names them."""
    with script_serving(UPSTREAM_APP, "http") as upstream:
        server = proxy(upstream, mode=upstream_era)
        async with (
            serving(server.http_app()) as base,
            Client(base + "/mcp", mode="per-request", timeout=30) as client,
        ):
            async with client.listen(resource_uris=["memo://readme"]) as subscription:
                assert subscription.acknowledged == {"resourceSubscriptions": ["memo://readme"]}
                await client.call_tool("touch", {"uri": "memo://readme"})
                note = await asyncio.wait_for(anext(aiter(subscription)), 10)
            assert note.method == "notifications/resources/updated"
            assert note.params is not None and note.params["uri"] == "memo://readme"
            for _ in range(500):  # the listen's stream closed: the proxy lets go upstream
                if not server.watched.following():
                    break
                await asyncio.sleep(0.01)
            assert not server.watched.following()


@pytest.mark.parametrize("upstream_era", ["handshake", "per-request"])
async def test_the_official_servers_log_messages_reach_a_2026_client(upstream_era: str) -> None:
    """The official SDK's stdio server logs at every level its client asked for: through
    the proxy, a 2026-07-28 client gets those at or above the level of its request."""
    logs: list[Any] = []
    async with (
        proxied(OFFICIAL, mode=upstream_era) as url,
        Client(url, mode="per-request", timeout=30, on_log=logs.append) as client,
    ):
        await client.set_logging_level("critical")
        assert text(await client.call_tool("shout", {"text": "hi"})) == "HI"
    assert [entry.data for entry in logs] == ["critical: hi", "alert: hi", "emergency: hi"]
