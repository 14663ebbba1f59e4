"""2026-07-28 requests seen by handlers: the era, the envelope, per-request logging, trace
context, cache hints, tools/list order, resource errors and results passed through.

`RawPeer` writes raw JSON-RPC lines to a served `Server` and reads what comes back, so the
tests see the wire exactly (and would see any server->client request, which a modern
request must never cause).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest

from mcpkit import Era, Server
from mcpkit.errors import ProtocolError
from mcpkit.protocol import Outgoing
from mcpkit.protocol.per_request import DEFAULT_CACHE_HINTS
from mcpkit.server import CacheHint, Context
from mcpkit.transports.memory import MemoryTransport, memory_pair

from .peer import connect

MODERN = "2026-07-28"
SERVER_INFO = "io.modelcontextprotocol/serverInfo"


def envelope(capabilities: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": capabilities or {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
    }
    meta.update(extra)
    return meta


class RawPeer:
    """Raw JSON-RPC against a served server: every message the server sends is recorded."""

    def __init__(self, end: MemoryTransport, server_end: MemoryTransport) -> None:
        self.end = end
        self.server_end = server_end  # what the server reads from (a transport's attributes)
        self.seen: list[dict[str, Any]] = []
        self._next = 0

    async def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send a request; its whole response message (result or error)."""
        self._next += 1
        request_id = self._next
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.end.write([Outgoing(orjson.dumps(message))])
        while True:
            data = await asyncio.wait_for(self.end.read(), 2)
            assert data is not None, "the server closed the connection"
            got = orjson.loads(data)
            self.seen.append(got)
            if got.get("id") == request_id and "method" not in got:
                return got  # type: ignore[no-any-return]

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        capabilities: dict[str, Any] | None = None,
        **meta: Any,
    ) -> dict[str, Any]:
        """A modern request (envelope added); its result. Fails on an error response."""
        params = {**(params or {}), "_meta": envelope(capabilities, **meta)}
        answer = await self.send(method, params)
        assert "result" in answer, answer
        return answer["result"]  # type: ignore[no-any-return]

    async def error(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        capabilities: dict[str, Any] | None = None,
        **meta: Any,
    ) -> dict[str, Any]:
        """A modern request expected to fail; its error object."""
        params = {**(params or {}), "_meta": envelope(capabilities, **meta)}
        answer = await self.send(method, params)
        assert "error" in answer, answer
        return answer["error"]  # type: ignore[no-any-return]

    def notifications(self, method: str = "notifications/message") -> list[Any]:
        return [m.get("params") for m in self.seen if m.get("method") == method and "id" not in m]

    def server_requests(self) -> list[dict[str, Any]]:
        return [m for m in self.seen if "method" in m and "id" in m]


@contextlib.asynccontextmanager
async def raw(server: Server) -> AsyncIterator[RawPeer]:
    client_end, server_end = memory_pair()
    served = asyncio.create_task(server.serve(server_end))
    peer = RawPeer(client_end, server_end)
    try:
        yield peer
    finally:
        await client_end.close()
        await asyncio.wait_for(served, 2)
    assert peer.server_requests() == []  # never, for modern requests


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def text(result: dict[str, Any]) -> str:
    return str(result["content"][0]["text"])


# -- the era --------------------------------------------------------------------------------------


async def test_context_knows_a_modern_request_from_its_envelope() -> None:
    server = Server("facts")
    seen: list[Any] = []

    @server.tool()
    def facts(ctx: Context) -> str:
        seen.append(
            (
                ctx.era,
                ctx.protocol_version,
                ctx.client_info,
                ctx.client_capabilities,
                ctx.envelope is not None,
                ctx.trace,
                ctx.principal,
            )
        )
        return "ok"

    async with raw(server) as peer:
        await peer.request("tools/call", call("facts"), {"sampling": {}})
    assert seen == [
        (Era.PER_REQUEST, MODERN, {"name": "raw", "version": "1"}, {"sampling": {}}, True, {}, None)
    ]
    seen.clear()
    async with connect(server, {"roots": {}}) as legacy:
        await legacy.call("facts")
    assert seen == [
        (
            Era.HANDSHAKE,
            "2025-11-25",
            {"name": "tester", "version": "9"},
            {"roots": {}},
            False,
            {},
            None,
        )
    ]


async def test_trace_context_reaches_the_handler() -> None:
    server = Server("trace")
    seen: list[dict[str, Any]] = []

    @server.tool()
    def traced(ctx: Context) -> str:
        seen.append(ctx.trace)
        return "ok"

    parent = "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01"
    async with raw(server) as peer:
        await peer.request("tools/call", call("traced"), traceparent=parent, baggage="k=v")
        await peer.request("tools/call", call("traced"))
    assert seen == [{"traceparent": parent, "baggage": "k=v"}, {}]


async def test_both_eras_on_one_connection() -> None:
    server = Server("mixed")

    @server.tool()
    def era(ctx: Context) -> str:
        return f"{ctx.era} {ctx.protocol_version}"

    async with raw(server) as peer:
        init = await peer.send(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "old", "version": "1"},
            },
        )
        assert init["result"]["protocolVersion"] == "2025-06-18"
        peer.end.write([Outgoing(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')])
        legacy = await peer.send("tools/call", call("era"))
        assert text(legacy["result"]) == "handshake 2025-06-18"
        assert "resultType" not in legacy["result"]
        modern = await peer.request("tools/call", call("era"))
        assert text(modern) == f"per-request {MODERN}"
        assert modern["resultType"] == "complete"


# -- logging --------------------------------------------------------------------------------------


async def test_log_messages_follow_the_request_log_level() -> None:
    server = Server("logs")

    @server.tool()
    async def chatty(ctx: Context) -> str:
        sent = [await ctx.debug("d"), await ctx.warning("w"), await ctx.error({"e": 1})]
        return ",".join(str(s) for s in sent)

    level = "io.modelcontextprotocol/logLevel"
    async with raw(server) as peer:
        assert text(await peer.request("tools/call", call("chatty"))) == "False,False,False"
        assert peer.notifications() == []  # no logLevel: MUST NOT emit
        result = await peer.request("tools/call", call("chatty"), **{level: "warning"})
        assert text(result) == "False,True,True"
        assert peer.notifications() == [
            {"level": "warning", "data": "w"},
            {"level": "error", "data": {"e": 1}},
        ]
        # The messages precede the response of the request they belong to.
        kinds = [m.get("method", "response") for m in peer.seen[-3:]]
        assert kinds == ["notifications/message", "notifications/message", "response"]
        peer.seen.clear()
        assert text(await peer.request("tools/call", call("chatty"), **{level: "debug"})) == (
            "True,True,True"
        )
        error = await peer.error("tools/call", call("chatty"), **{level: "loud"})
        assert error["code"] == -32602


async def test_logging_set_level_does_not_exist_at_2026_07_28() -> None:
    server = Server("logs")
    async with raw(server) as peer:
        error = await peer.error("logging/setLevel", {"level": "debug"})
        assert error["code"] == -32601


async def test_a_session_log_level_does_not_leak_into_modern_requests() -> None:
    server = Server("logs")

    @server.tool()
    async def chatty(ctx: Context) -> str:
        return str(await ctx.error("e"))

    async with raw(server) as peer:
        await peer.send(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "old", "version": "1"},
            },
        )
        peer.end.write([Outgoing(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')])
        assert "result" in await peer.send("logging/setLevel", {"level": "debug"})
        assert text((await peer.send("tools/call", call("chatty")))["result"]) == "True"
        peer.seen.clear()
        assert text(await peer.request("tools/call", call("chatty"))) == "False"
        assert peer.notifications() == []


# -- caching --------------------------------------------------------------------------------------


async def test_cache_hints_come_from_the_server_configuration() -> None:
    cache = {"tools/list": CacheHint(300_000, "private"), "prompts/list": 5}
    server = Server("cached", cache=cache)

    @server.tool()
    def one() -> str:
        return "1"

    @server.prompt()
    def greet() -> str:
        return "hello"

    async with raw(server) as peer:
        tools = await peer.request("tools/list")
        assert (tools["ttlMs"], tools["cacheScope"]) == (300_000, "private")
        assert tools["_meta"][SERVER_INFO] == {"name": "cached", "version": "0.0.0"}
        prompts = await peer.request("prompts/list")
        assert (prompts["ttlMs"], prompts["cacheScope"]) == (5, "public")
        discovered = await peer.request("server/discover")
        default = DEFAULT_CACHE_HINTS["server/discover"]
        assert (discovered["ttlMs"], discovered["cacheScope"]) == (default.ttl_ms, default.scope)
        called = await peer.request("tools/call", call("one"))
        assert "ttlMs" not in called and called["resultType"] == "complete"


def test_cache_configuration_errors() -> None:
    with pytest.raises(ValueError, match="not cacheable"):
        Server("bad", cache={"tools/call": 5})
    with pytest.raises(ValueError, match="must be a CacheHint"):
        Server("bad", cache={"tools/list": None})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="must be a CacheHint"):
        Server("bad", cache={"tools/list": True})
    with pytest.raises(ValueError):
        Server("bad", cache={"tools/list": -1})
    with pytest.raises(ValueError):
        Server("bad", cache={"tools/list": CacheHint(1, "everyone")})
    hints = Server("ok", cache={"resources/read": 10}).connection_config().cache_hints
    assert hints is not None
    assert hints["resources/read"] == CacheHint(10, "private")  # the method's default scope
    assert hints["tools/list"] == DEFAULT_CACHE_HINTS["tools/list"]


# -- tools/list order -----------------------------------------------------------------------------


async def test_tools_list_is_sorted_by_name_in_both_eras_and_across_pages() -> None:
    server = Server("order", page_size=2)
    for name in ("zeta", "alpha", "mu", "beta", "omega"):
        server.add_tool(lambda: "x", name=name)
    expected = ["alpha", "beta", "mu", "omega", "zeta"]

    async with raw(server) as peer:
        names: list[str] = []
        cursor = None
        while True:
            page = await peer.request("tools/list", {"cursor": cursor} if cursor else {})
            assert page["resultType"] == "complete" and "ttlMs" in page
            names += [tool["name"] for tool in page["tools"]]
            cursor = page.get("nextCursor")
            if cursor is None:
                break
        assert names == expected
    async with connect(server) as legacy:
        listed = await legacy.session.request("tools/list")
        assert [tool["name"] for tool in listed["tools"]] == expected[:2]
        assert "resultType" not in listed
    server.add_tool(lambda: "x", name="aardvark")
    async with raw(server) as peer:
        first = await peer.request("tools/list")
        assert [tool["name"] for tool in first["tools"]] == ["aardvark", "alpha"]


# -- resources ------------------------------------------------------------------------------------


async def test_resource_not_found_code_follows_the_request_era() -> None:
    server = Server("res")

    @server.resource("note://{id}")
    def note(id: str) -> str | None:
        return None

    async with raw(server) as peer:
        error = await peer.error("resources/read", {"uri": "note://7"})
        assert error["code"] == -32602 and error["data"] == {"uri": "note://7"}
        error = await peer.error("resources/read", {"uri": "other://x"})
        assert error["code"] == -32602
    async with connect(server) as legacy:
        with pytest.raises(ProtocolError) as failed:
            await legacy.read("note://7")
        assert failed.value.code == -32002


# -- results pass through -------------------------------------------------------------------------


async def test_handler_results_pass_through_with_only_the_stamp_added() -> None:
    server = Server("shapes")

    @server.tool()
    def structured(n: int) -> dict[str, int]:
        return {"double": n * 2}

    @server.prompt()
    def review(code: str) -> str:
        return f"Review {code}"

    @server.resource("static://hello")
    def hello() -> str:
        return "hi"

    async with raw(server) as peer:
        result = await peer.request("tools/call", call("structured", n=4))
        assert result["structuredContent"] == {"double": 8}
        assert result["isError"] is False and result["resultType"] == "complete"
        assert set(result) == {"content", "structuredContent", "isError", "resultType", "_meta"}
        prompt = await peer.request("prompts/get", {"name": "review", "arguments": {"code": "x"}})
        assert prompt["messages"][0]["content"]["text"] == "Review x"
        assert prompt["resultType"] == "complete" and "ttlMs" not in prompt
        read = await peer.request("resources/read", {"uri": "static://hello"})
        assert read["contents"][0]["text"] == "hi"
        assert (read["ttlMs"], read["cacheScope"]) == (0, "private")
        listed = await peer.request("resources/list")  # a prepared (cached) page, stamped
        assert listed["resources"][0]["uri"] == "static://hello"
        assert listed["resultType"] == "complete" and listed["_meta"][SERVER_INFO]["name"]
        again = await peer.request("resources/list")
        assert again == listed


async def test_ctx_modern_still_answers_with_a_deprecation_warning() -> None:
    # Issue 23: the era is ctx.era (named by mechanism); ctx.modern goes after one release.
    server = Server("old-spelling")

    @server.tool()
    def old(ctx: Context) -> str:
        with pytest.warns(DeprecationWarning, match="ctx.era is mcpkit.Era.PER_REQUEST") as seen:
            answer = ctx.modern
        assert seen[0].filename == __file__
        return str(answer)

    async with raw(server) as peer:
        assert text(await peer.request("tools/call", call("old"))) == "True"
