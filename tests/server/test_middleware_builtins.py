"""The built-in middleware (issue 28): request logging, timing, rate limiting (in process),
list caching, error masking, per-tool timeouts; through a real client, both eras."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from mcpkit import Server
from mcpkit.errors import ProtocolError
from mcpkit.gateway import proxy
from mcpkit.server.middleware import (
    ErrorMasking,
    ListCache,
    LocalBuckets,
    RateLimit,
    RequestLogging,
    RequestTiming,
    ToolTimeout,
)
from mcpkit.testing import call, connect, texts

ERAS = ["handshake", "2026-07-28"]
SECRET = "password=hunter2 at /srv/db"


def app(**options: Any) -> Server:
    server = Server("app", **options)

    @server.tool()
    def echo(text: str) -> str:
        return text

    @server.tool()
    def leaky() -> str:
        raise RuntimeError(SECRET)

    @server.tool()
    async def slow() -> str:
        await asyncio.Event().wait()  # never set: only a timeout ends it
        return "never"

    @server.tool()
    async def quick() -> str:
        return "quick"

    @server.prompt()
    def greet() -> str:
        raise ValueError(SECRET)

    return server


# -- logging and timing ----------------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
async def test_request_logging_logs_method_name_outcome_and_time(
    era: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "mcpkit.requests")
    async with connect(app(middleware=[RequestLogging()]), era=era) as client:
        await call(client, "echo", text="private words")
        await call(client, "leaky")
        with pytest.raises(ProtocolError):
            await client.get_prompt("nope")
    lines = [r.getMessage() for r in caplog.records if r.name == "mcpkit.requests"]
    echo = next(line for line in lines if "tools/call echo" in line)
    assert "-> ok in" in echo and " ms" in echo
    assert "private words" not in echo  # params only when asked for
    assert any("tools/call leaky" in line and "-> tool error" in line for line in lines)
    assert any("prompts/get nope" in line and "-> error -32602" in line for line in lines)
    era_name = "handshake" if era == "handshake" else "per-request"
    assert f"era={era_name}" in echo


async def test_request_logging_includes_params_when_asked(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, "mcpkit.requests")
    async with connect(app(middleware=[RequestLogging(include_params=True)])) as client:
        await call(client, "echo", text="visible words")
    assert any("visible words" in r.getMessage() for r in caplog.records)


async def test_timing_counts_each_method() -> None:
    timing = RequestTiming()
    async with connect(app(middleware=[timing])) as client:
        for _ in range(3):
            await call(client, "echo", text="x")
        await client.list_tools()
    calls = timing.durations["tools/call"]
    assert calls.count == 3 and calls.total > 0 and calls.longest >= calls.mean > 0
    assert timing.durations["tools/list"].count == 1


# -- rate limiting ---------------------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
async def test_the_rate_limit_refuses_past_the_burst_then_refills(era: str) -> None:
    now = [0.0]
    limit = RateLimit(2, burst=2, per="session", buckets=LocalBuckets(clock=lambda: now[0]))
    async with connect(app(middleware=[limit]), era=era) as client:
        await call(client, "echo", text="1")
        await call(client, "echo", text="2")
        with pytest.raises(ProtocolError) as raised:
            await call(client, "echo", text="3")
        assert (raised.value.code, raised.value.message) == (-32000, "Rate limit exceeded")
        assert raised.value.data == {"retryAfter": 0.5}
        now[0] += 0.5  # one token back
        await call(client, "echo", text="4")


async def test_the_rate_limit_per_session_keeps_clients_apart() -> None:
    limit = RateLimit(0.001, burst=1, per="session", methods={"tools/call"})
    server = app(middleware=[limit])
    async with connect(server) as first, connect(server) as second:
        await call(first, "echo", text="a")
        await call(second, "echo", text="b")  # its own bucket
        await first.list_tools()  # not a limited method
        with pytest.raises(ProtocolError):
            await call(first, "echo", text="c")


async def test_the_rate_limit_per_tool_keeps_tools_apart() -> None:
    limit = RateLimit(0.001, burst=1, per="tool")
    async with connect(app(middleware=[limit])) as client:
        await call(client, "echo", text="a")
        await call(client, "quick")
        with pytest.raises(ProtocolError):
            await call(client, "echo", text="b")


def test_the_rate_limit_refuses_bad_settings() -> None:
    with pytest.raises(ValueError, match="rate"):
        RateLimit(0)
    with pytest.raises(ValueError, match="per"):
        RateLimit(1, per="planet")


# -- list caching ----------------------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
async def test_list_results_are_cached_until_the_list_changes(era: str) -> None:
    cache = ListCache()
    server = app(middleware=[cache])
    async with connect(server, era=era, cache=False) as client:  # each list reaches the server
        first = await client.list_tools()
        again = await client.list_tools()
        assert cache.hits == 1 and cache.misses == 1
        assert [t.name for t in again.tools] == [t.name for t in first.tools]

        @server.tool()
        def added() -> str:
            return "new"

        names = [t.name for t in (await client.list_tools()).tools]
        assert "added" in names  # the change dropped the entry
        assert cache.misses == 2


async def test_a_mounted_server_s_change_drops_the_parent_s_cached_list() -> None:
    cache = ListCache()
    parent, child = app(middleware=[cache]), Server("child")
    parent.mount(child, prefix="kid")
    async with connect(parent) as client:
        await client.list_prompts()

        @child.prompt()
        def hint() -> str:
            return "a hint"

        assert "kid_hint" in [p.name for p in (await client.list_prompts()).prompts]


async def test_list_cache_with_a_ttl_expires() -> None:
    now = [0.0]
    cache = ListCache(ttl=10, clock=lambda: now[0])
    async with connect(app(middleware=[cache])) as client:
        await client.list_tools()
        await client.list_tools()
        now[0] = 11
        await client.list_tools()
    assert (cache.hits, cache.misses) == (1, 2)


# -- error masking ---------------------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
async def test_a_tool_s_exception_is_masked_with_an_id_found_in_the_log(
    era: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, "mcpkit.errors")
    async with connect(app(middleware=[ErrorMasking()]), era=era) as client:
        result = await call(client, "leaky")
    [text] = texts(result)
    assert result["isError"] is True
    assert SECRET not in text and "RuntimeError" not in text
    assert text.startswith("Tool leaky failed (error id ")
    error_id = text.removeprefix("Tool leaky failed (error id ").rstrip(")")
    [record] = [r for r in caplog.records if error_id in r.getMessage()]
    assert record.exc_info is not None and SECRET in str(record.exc_info[1])


@pytest.mark.parametrize("era", ERAS)
async def test_an_unexpected_exception_is_a_generic_error_with_an_id(
    era: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, "mcpkit.errors")
    async with connect(app(middleware=[ErrorMasking()]), era=era) as client:
        with pytest.raises(ProtocolError) as raised:
            await client.get_prompt("greet")
    error = raised.value
    assert error.code == -32603 and SECRET not in str(error.to_error_object())
    error_id = error.data["errorId"]
    assert error.message == f"Internal error (error id {error_id})"
    [record] = [r for r in caplog.records if error_id in r.getMessage()]
    assert record.exc_info is not None and SECRET in str(record.exc_info[1])


async def test_protocol_errors_pass_unmasked_and_unmasked_tools_keep_their_message() -> None:
    async with connect(app(middleware=[ErrorMasking()])) as client:
        with pytest.raises(ProtocolError) as raised:
            await call(client, "missing")
        assert raised.value.code == -32602 and "missing" in raised.value.message
    async with connect(app()) as client:  # without masking: the tool's message, as before
        assert texts(await call(client, "leaky")) == [SECRET]


async def test_masking_covers_a_mounted_server_s_tool_and_a_proxy_s_upstream() -> None:
    parent = Server("parent", middleware=[ErrorMasking()])
    parent.mount(app(), prefix="kid")
    async with connect(parent) as client:
        [text] = texts(await call(client, "kid_leaky"))
        assert SECRET not in text and "error id" in text
    front = proxy(app())
    front.add_middleware(ErrorMasking())
    async with connect(front) as client:  # the upstream's own tool error passes as it came
        assert texts(await call(client, "leaky")) == [SECRET]


# -- per-tool timeout ------------------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
async def test_a_tool_past_its_timeout_ends_with_a_tool_error(era: str) -> None:
    timeout = ToolTimeout(None, per_tool={"slow": 0.2})
    async with connect(app(middleware=[timeout]), era=era) as client:
        result = await call(client, "slow")
        assert result["isError"] is True
        assert texts(result) == ["Tool slow timed out after 0.2 s"]
        assert texts(await call(client, "quick")) == ["quick"]


async def test_the_default_timeout_applies_to_every_tool() -> None:
    async with connect(app(middleware=[ToolTimeout(0.2)])) as client:
        assert texts(await call(client, "slow")) == ["Tool slow timed out after 0.2 s"]
        assert texts(await call(client, "echo", text="ok")) == ["ok"]


def test_a_timeout_must_be_positive() -> None:
    with pytest.raises(ValueError):
        ToolTimeout(0)
    with pytest.raises(ValueError):
        ToolTimeout(per_tool={"x": -1})


async def test_a_proxys_list_cache_drops_a_list_its_upstream_changed() -> None:
    """The upstream's list_changed (heard by the proxy's shared upstream client) makes the
    proxy's cached tools/list stale; without it the cache kept the old list until its ttl."""
    import sys
    from pathlib import Path

    from mcpkit import Client
    from mcpkit.gateway import proxy
    from mcpkit.server.middleware import ListCache
    from tests.http.servers import serving

    upstream = Path(__file__).parents[1] / "gateway" / "gateway_upstream.py"
    server = proxy([sys.executable, str(upstream)])
    server.add_middleware(ListCache())
    # cache=False: the client's own response cache (ttlMs) is not what is tested here
    async with (
        serving(server.http_app()) as base,
        Client(base + "/mcp", mode="per-request", timeout=30, cache=False) as client,
    ):
        first = await client.request("tools/list")
        assert "grown" not in {tool["name"] for tool in first["tools"]}
        await client.call_tool("grow")
        for _ in range(200):  # the list_changed travels from the upstream process
            listed = await client.request("tools/list")
            if "grown" in {tool["name"] for tool in listed["tools"]}:
                break
            await asyncio.sleep(0.02)
        else:
            raise AssertionError("the cached list never changed")


@pytest.mark.parametrize("ttl", [None, 60.0])
async def test_a_proxys_list_cache_never_serves_one_session_another_s_list(
    ttl: float | None,
) -> None:
    """Handshake-era sessions of a stdio upstream each have an upstream process of their own,
    whose lists may differ: one session's cached list must not answer another's (it did:
    the cache was keyed by server and page only)."""
    import sys
    from pathlib import Path

    from mcpkit import Client
    from mcpkit.gateway import proxy
    from mcpkit.server.middleware import ListCache

    upstream = Path(__file__).parents[1] / "gateway" / "gateway_upstream.py"
    server = proxy([sys.executable, str(upstream)])
    cache = ListCache(ttl=ttl)
    server.add_middleware(cache)
    async with (
        Client(server, mode="handshake", timeout=30, cache=False) as other,
        Client(server, mode="handshake", timeout=30, cache=False) as grower,
    ):
        assert "grown" not in {tool.name for tool in (await other.list_tools()).tools}
        await grower.call_tool("grow")  # grower's own upstream process now has one more
        assert "grown" in {tool.name for tool in (await grower.list_tools()).tools}
        hits = cache.hits
        assert "grown" not in {tool.name for tool in (await other.list_tools()).tools}
    # With a ttl, other's second list came from its own session's entry; without, no cache.
    assert cache.hits == (hits + 1 if ttl is not None else 0)


async def test_list_cache_keeps_at_most_max_entries() -> None:
    cache = ListCache(max_entries=1)
    async with connect(app(middleware=[cache]), cache=False) as client:
        await client.list_tools()
        await client.list_prompts()  # pushes the tools list out
        await client.list_tools()
        await client.list_tools()
    assert (cache.hits, cache.misses) == (1, 3)
    with pytest.raises(ValueError, match="max_entries"):
        ListCache(max_entries=0)
