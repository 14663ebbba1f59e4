"""The proxy's per-upstream limits (gateway/limits.py): answer size, rate, calls at once,
notification floods, and hung upstreams; a misbehaving upstream harms no other session."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import orjson
import pytest

from mcpkit import Client
from mcpkit.errors import INTERNAL_ERROR, ProtocolError
from mcpkit.gateway import UpstreamLimits, proxy
from mcpkit.gateway.limits import UpstreamGuard
from mcpkit.types import TextContent
from tests.gateway import limits_upstream
from tests.gateway.limits_upstream import server as upstream
from tests.http.servers import serving


def text(result: Any) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


def echo(said: str) -> dict[str, Any]:
    return {"name": "echo", "arguments": {"text": said}}


async def test_an_answer_over_the_size_limit_is_a_clear_error() -> None:
    limited = proxy(upstream, limits=UpstreamLimits(max_result_bytes=10_000))
    async with Client(limited) as client:
        assert text(await client.call_tool("big", {"size": 1_000})) == "x" * 1_000
        with pytest.raises(ProtocolError) as refused:
            await client.call_tool("big", {"size": 20_000})
        assert refused.value.code == INTERNAL_ERROR
        assert "over the proxy's limit of 10000" in refused.value.message
        assert text(await client.call_tool("echo", {"text": "still here"})) == "still here"


def sample(params: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": "yes"}, "model": "m"}


async def test_the_size_limit_holds_for_a_call_the_proxy_bridges_in_rounds() -> None:
    # A 2026-07-28 client that can be asked, to a handshake-era upstream: asking.py's path.
    limits = UpstreamLimits(max_result_bytes=10_000)
    limited = proxy(upstream, mode="handshake", limits=limits)
    async with Client(limited, mode="per-request", sampling=sample) as client:
        assert text(await client.call_tool("big", {"size": 1_000})) == "x" * 1_000
        with pytest.raises(ProtocolError) as refused:
            await client.call_tool("big", {"size": 20_000})
    assert "over the proxy's limit of 10000" in refused.value.message


async def test_the_default_size_limit_lets_a_large_answer_through() -> None:
    async with Client(proxy(upstream)) as client:
        assert len(text(await client.call_tool("big", {"size": 2_000_000}))) == 2_000_000


async def test_requests_over_the_rate_are_refused_with_a_retry_after() -> None:
    # Two at once, then one each 10 s: the third call in a row is over the rate.
    limited = proxy(upstream, limits=UpstreamLimits(rate=0.1, burst=2))
    async with Client(limited) as client:
        await client.request("tools/call", echo("1"))
        await client.request("tools/call", echo("2"))
        with pytest.raises(ProtocolError) as refused:
            await client.request("tools/call", echo("3"))
    assert refused.value.code == INTERNAL_ERROR
    assert "rate limited" in refused.value.message
    assert 0 < refused.value.data["retryAfter"] <= 10


async def test_calls_over_the_concurrency_limit_wait_their_turn() -> None:
    limits_upstream.seen["most"] = 0
    limited = proxy(upstream, limits=UpstreamLimits(max_in_flight=1))
    async with Client(limited) as client:
        results = await asyncio.gather(*(client.call_tool("busy") for _ in range(3)))
    assert [text(result) for result in results] == ["done"] * 3
    assert limits_upstream.seen["most"] == 1


async def test_a_flooding_upstream_is_cut_off_and_other_sessions_go_on() -> None:
    told = asyncio.Event()
    logs: list[Any] = []

    def on_log(params: Any) -> None:
        logs.append(params.data)
        if "too many notifications" in str(params.data):
            told.set()

    limited = proxy(upstream, limits=UpstreamLimits(max_notifications_per_second=20))
    async with (
        serving(limited.http_app()) as base,
        Client(base + "/mcp", mode="handshake", timeout=30, on_log=on_log) as flooded,
        Client(base + "/mcp", mode="handshake", timeout=30) as other,
    ):
        await flooded.set_logging_level("info")
        before = limited.upstreams.opened
        with pytest.raises(ProtocolError) as cut:
            await flooded.call_tool("flood", {"count": 500})
        assert cut.value.code == INTERNAL_ERROR
        assert "unavailable" in cut.value.message
        await asyncio.wait_for(told.wait(), 10)
        assert len([log for log in logs if str(log).startswith("note")]) < 500
        assert text(await other.call_tool("echo", {"text": "fine"})) == "fine"
        # The flooded session's next request reaches a new upstream session.
        assert text(await flooded.call_tool("echo", {"text": "again"})) == "again"
        assert limited.upstreams.opened > before


async def test_a_call_answered_after_its_flood_still_answers_the_error() -> None:
    """The answer comes with the notifications that closed its upstream session: the call
    answers -32603 as docs/gateway.md says, not the answer of a session cut off."""
    limited = proxy(upstream, limits=UpstreamLimits(max_notifications_per_second=20))
    async with (
        serving(limited.http_app()) as base,
        Client(base + "/mcp", mode="handshake", timeout=30, on_log=lambda _: None) as flooded,
    ):
        await flooded.set_logging_level("info")
        with pytest.raises(ProtocolError) as cut:
            await flooded.call_tool("flood", {"count": 100, "answer": True})
        assert cut.value.code == INTERNAL_ERROR
        assert "unavailable: the connection to it closed" in cut.value.message
        assert text(await flooded.call_tool("echo", {"text": "again"})) == "again"


async def test_a_hung_upstream_call_times_out_and_the_session_goes_on() -> None:
    async with Client(proxy(upstream, timeout=2), timeout=30) as client:
        with pytest.raises(ProtocolError) as hung:
            await client.request("tools/call", {"name": "hang", "arguments": {}})
        assert hung.value.code == INTERNAL_ERROR
        assert "did not answer in time" in hung.value.message
        assert text(await client.call_tool("echo", {"text": "after"})) == "after"


def test_limits_refuse_nonsense() -> None:
    with pytest.raises(ValueError, match="rate"):
        UpstreamLimits(rate=0)
    with pytest.raises(ValueError, match="max_notifications_per_second"):
        UpstreamLimits(max_notifications_per_second=-1)


@pytest.mark.parametrize(
    "answer",
    [
        {"content": [{"type": "text", "text": 'é\n"\\' * 3_000}]},
        {"structuredContent": {"n": 10**4_000, "f": [1.5e300] * 300, "k" * 9_000: None}},
        {"content": [{"type": "text", "text": "x" * 9_990}]},
    ],
)
def test_the_size_check_agrees_with_the_serialized_size(answer: dict[str, Any]) -> None:
    try:  # the size the proxy sends on: orjson's, or json's for what orjson refuses
        size = len(orjson.dumps(answer))
    except orjson.JSONEncodeError:
        size = len(json.dumps(answer, separators=(",", ":"), ensure_ascii=False).encode())
    guard = UpstreamGuard(UpstreamLimits(max_result_bytes=size))
    guard.check_size(answer, "exact")  # at the limit: passes
    with pytest.raises(ProtocolError, match="over the proxy's limit"):
        UpstreamGuard(UpstreamLimits(max_result_bytes=size - 1)).check_size(answer, "exact")


def limited_gateway(limits: Any) -> Any:
    """A gateway of one server (this file's upstream over stdio) with `"limits": limits`."""
    from pathlib import Path

    from mcpkit.gateway import gateway
    from mcpkit.host import load_config

    script = str(Path(limits_upstream.__file__))
    entry = {"command": sys.executable, "args": ["-m", "mcpkit", "run", script]}
    config = {"mcpServers": {"calc": {**entry, "limits": limits}}}
    return gateway(load_config(config))


async def test_a_gateway_entry_sets_its_limits() -> None:
    server = limited_gateway({"rate": 0.1, "burst": 2, "maxResultBytes": 10_000})
    call = {"name": "calc__echo", "arguments": {"text": "hi"}}
    async with Client(server, timeout=30) as client:
        with pytest.raises(ProtocolError) as big:
            await client.request("tools/call", {"name": "calc__big", "arguments": {"size": 20_000}})
        assert "over the proxy's limit of 10000" in big.value.message
        await client.request("tools/call", call)
        with pytest.raises(ProtocolError) as refused:
            await client.request("tools/call", call)
    assert "rate limited" in refused.value.message


@pytest.mark.parametrize(
    ("limits", "said"),
    [
        ({"rate": 0}, "rate must be positive"),
        ({"maxInFlight": 1.5}, "maxInFlight must be a whole number or null"),
        ({"rte": 5}, "unknown rte"),
        ([5], "must be an object of limits"),
        ({"burst": True}, "burst must be a whole number"),
    ],
)
def test_a_gateway_entry_with_bad_limits_is_left_out(
    limits: Any, said: str, caplog: pytest.LogCaptureFixture
) -> None:
    # Served without its limits would be worse than not served.
    server = limited_gateway(limits)
    assert server.upstreams == {}
    assert "server 'calc', field 'limits'" in caplog.text and said in caplog.text


def test_limits_left_out_keep_their_defaults_and_null_turns_one_off() -> None:
    server = limited_gateway({"rate": 5, "maxNotificationsPerSecond": None})
    limits = server.upstreams["calc"].upstreams.guard.limits
    assert (limits.rate, limits.max_notifications_per_second) == (5, None)
    assert limits.max_result_bytes == UpstreamLimits().max_result_bytes
