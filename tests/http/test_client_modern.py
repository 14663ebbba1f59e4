"""The client over Streamable HTTP at 2026-07-28: the first POST is the era probe, modern
requests are sessionless POSTs with their headers (MCP-Protocol-Version, Mcp-Method, Mcp-Name,
Mcp-Param-*), a -32020 answer re-lists the tools and retries once, cancelling closes the
stream; and the fallback to initialize (and on to HTTP+SSE) for handshake-era servers.
Against the official SDK's server (both eras) in process, raw ASGI apps, and the npm reference
server.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

import orjson
import pytest
from mcp.server.mcpserver import Context, Elicit, MCPServer, Resolve
from pydantic import BaseModel

from mcpkit import Client
from mcpkit.client import era as era_module
from mcpkit.errors import ProtocolError
from mcpkit.types import TextContent
from tests.peers import node_env, npm_command

from .servers import Wiretap, serving, unused_port

pytestmark = pytest.mark.interop
JSONObject = dict[str, Any]
VERSION = "mcp-protocol-version"
SESSION = "mcp-session-id"


@pytest.fixture(autouse=True)
def fresh_era_cache() -> Iterator[None]:
    era_module.ERAS.clear()
    yield
    era_module.ERAS.clear()


class Name(BaseModel):
    name: str


def ask_name(ctx: Context) -> Elicit[Name]:
    return Elicit("What is your name?", Name)


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def greet(who: Annotated[Name, Resolve(ask_name)]) -> str:
    """Elicitation in either era."""
    return f"Hello, {who.name}!"


def official_app() -> Any:
    server = MCPServer("official-modern-http")
    server.tool()(add)
    server.tool()(greet)
    return server.streamable_http_app()


async def elicit(params: Any) -> JSONObject:
    return {"action": "accept", "content": {"name": "Ada"}}


def text(result: Any) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


# -- the official SDK's server -------------------------------------------------------------


async def test_official_server_modern_over_http_with_its_headers() -> None:
    recorder = Wiretap(official_app())
    async with serving(recorder) as base:
        client = Client(base + "/mcp", elicitation=elicit, timeout=20)
        async with client:
            assert client.era == "per-request"
            assert client.server_info["name"] == "official-modern-http"
            assert text(await client.call_tool("add", {"a": 20, "b": 22})) == "42"
            assert text(await client.call_tool("greet", {})) == "Hello, Ada!"  # input_required
            await client.ping()
    assert {e["method"] for e in recorder.seen} == {"POST"}  # no GET stream, no DELETE
    for entry in recorder.seen:
        headers = entry["headers"]
        assert headers[VERSION] == "2026-07-28"
        assert SESSION not in headers
        assert entry["status"] == 200
    methods = [e["headers"]["mcp-method"] for e in recorder.seen]
    assert methods[0] == "server/discover"
    assert "tools/list" in methods
    calls = [e["headers"] for e in recorder.seen if e["headers"]["mcp-method"] == "tools/call"]
    assert [h["mcp-name"] for h in calls] == ["add", "greet", "greet"]  # greet: asked, retried


async def test_official_server_acknowledges_a_listen_over_http() -> None:
    async with serving(official_app()) as base, Client(base + "/mcp", timeout=20) as client:
        async with client.listen(tools=True) as sub:
            assert sub.acknowledged == {"toolsListChanged": True}
        assert text(await client.call_tool("add", {"a": 1, "b": 2})) == "3"


async def test_official_server_pinned_legacy_over_http() -> None:
    recorder = Wiretap(official_app())
    async with serving(recorder) as base:
        client = Client(base + "/mcp", elicitation=elicit, mode="handshake", timeout=20)
        async with client:
            assert client.era == "handshake"
            assert text(await client.call_tool("greet", {})) == "Hello, Ada!"  # mid-call ask
    assert recorder.seen[0]["headers"].get("mcp-method") is None  # initialize, no probe
    assert SESSION in recorder.seen[1]["headers"]


# -- our own server ------------------------------------------------------------------------


async def test_our_http_server_is_modern_progress_logging_and_cancelling() -> None:
    from .server_fixture import make_server

    recorder = Wiretap(make_server().http_app())
    async with serving(recorder) as base, Client(base + "/mcp", timeout=10) as client:
        assert client.era == "per-request"
        assert client.server_info["name"] == "http-fixture"
        added = await client.call_tool("add", {"a": 2, "b": 3})
        assert added.structured_content == {"result": 5}
        progress: list[float] = []
        chatty = {"name": "chatty", "arguments": {"steps": 3}}
        await client.request("tools/call", chatty, on_progress=lambda p, t, m: progress.append(p))
        assert progress == [1, 2, 3]
        slow = asyncio.ensure_future(client.call_tool("slow", {"seconds": 5}))
        async with asyncio.timeout(5):  # the call has reached the server before it is cancelled
            while not any(e["headers"].get("mcp-name") == "slow" for e in recorder.seen):
                await asyncio.sleep(0.01)
        slow.cancel()
        await asyncio.gather(slow, return_exceptions=True)
    assert {e["method"] for e in recorder.seen} == {"POST"}
    assert all(SESSION not in e["headers"] for e in recorder.seen)
    methods = [e["headers"].get("mcp-method") for e in recorder.seen]
    assert "notifications/cancelled" not in methods


# -- raw apps: header rules, refusals, cancellation ----------------------------------------

DISCOVERED: JSONObject = {
    "resultType": "complete",
    "supportedVersions": ["2026-07-28"],
    "capabilities": {"tools": {"listChanged": True}},
}
TOOLS: JSONObject = {
    "resultType": "complete",
    "tools": [
        {
            "name": "run_sql",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "region": {"type": "string", "x-mcp-header": "Region"},
                    "query": {"type": "string"},
                    "opts": {
                        "type": "object",
                        "properties": {"dry": {"type": "boolean", "x-mcp-header": "Dry"}},
                    },
                },
            },
        },
        {
            "name": "bad_header",
            "inputSchema": {
                "type": "object",
                "properties": {"ratio": {"type": "number", "x-mcp-header": "Ratio"}},
            },
        },
    ],
}


def raw_app(answer: Callable[[JSONObject, JSONObject], tuple[int, Any]]) -> Any:
    """An ASGI app answering each POST with `answer(message, headers) -> (status, body)`;
    a body that is a dict goes out as JSON, bytes as they are."""
    seen: list[tuple[JSONObject, JSONObject]] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        request = orjson.loads(body) if body else {}
        seen.append((request, headers))
        status, reply = answer(request, headers)
        data = orjson.dumps(reply) if isinstance(reply, dict) else reply
        kind = [(b"content-type", b"application/json")] if data else []
        await send({"type": "http.response.start", "status": status, "headers": kind})
        await send({"type": "http.response.body", "body": data})

    app.seen = seen  # type: ignore[attr-defined]
    return app


def ok(request: JSONObject, result: JSONObject) -> tuple[int, JSONObject]:
    return 200, {"jsonrpc": "2.0", "id": request["id"], "result": result}


def error(request: JSONObject, status: int, code: int, message: str, data: Any = None) -> Any:
    err: JSONObject = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return status, {"jsonrpc": "2.0", "id": request.get("id"), "error": err}


async def test_param_headers_invalid_tools_and_a_header_mismatch_retry(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level("WARNING", logger="mcpkit.client")
    calls: list[JSONObject] = []

    def answer(request: JSONObject, headers: JSONObject) -> Any:
        method = request.get("method")
        if method == "server/discover":
            return ok(request, DISCOVERED)
        if method == "tools/list":
            return ok(request, TOOLS)
        calls.append(headers)
        if len(calls) == 1:
            return error(request, 400, -32020, "Header mismatch: Mcp-Param-Region missing")
        return ok(request, {"resultType": "complete", "content": []})

    app = raw_app(answer)
    async with serving(app) as base, Client(base + "/mcp", timeout=10) as client:
        tools = await client.list_tools()
        assert [t.name for t in tools.tools] == ["run_sql"]  # bad_header dropped
        assert any("bad_header" in r.getMessage() for r in caplog.records)
        arguments = {"region": "Hello, 世界", "query": "select 1", "opts": {"dry": True}}
        await client.call_tool("run_sql", arguments)
    assert len(calls) == 2  # refused with -32020, tools listed again, retried once
    listed = [r for r, _ in app.seen if r.get("method") == "tools/list"]
    assert len(listed) == 2
    headers = calls[1]
    assert headers["mcp-method"] == "tools/call"
    assert headers["mcp-name"] == "run_sql"
    assert headers["mcp-param-region"] == "=?base64?SGVsbG8sIOS4lueVjA==?="
    assert headers["mcp-param-dry"] == "true"


async def test_a_header_mismatch_retry_uses_the_relisted_definition_and_happens_once() -> None:
    plain = {"name": "run_sql", "inputSchema": {"type": "object", "properties": {}}}
    listings = [[plain], TOOLS["tools"][:1], TOOLS["tools"][:1]]
    calls: list[JSONObject] = []

    def answer(request: JSONObject, headers: JSONObject) -> Any:
        method = request.get("method")
        if method == "server/discover":
            return ok(request, DISCOVERED)
        if method == "tools/list":
            return ok(request, {"resultType": "complete", "tools": listings.pop(0)})
        calls.append(headers)
        if "mcp-param-region" not in headers or len(calls) > 2:
            return error(request, 400, -32020, "Header mismatch")
        return ok(request, {"resultType": "complete", "content": []})

    async with serving(raw_app(answer)) as base, Client(base + "/mcp", timeout=10) as client:
        await client.call_tool("run_sql", {"region": "eu"})  # lists, refused, relists, retries
        assert [h.get("mcp-param-region") for h in calls] == [None, "eu"]
        with pytest.raises(ProtocolError) as refused:  # refused again after the retry: raised
            await client.call_tool("run_sql", {"region": "eu"})
    assert refused.value.code == -32020
    assert len(calls) == 4


async def test_modern_refusals_keep_their_error_data() -> None:
    def answer(request: JSONObject, headers: JSONObject) -> Any:
        if request.get("method") == "server/discover":
            return ok(request, DISCOVERED)
        return error(request, 400, -32021, "Missing capability", {"requiredCapabilities": {}})

    async with serving(raw_app(answer)) as base, Client(base + "/mcp", timeout=10) as client:
        with pytest.raises(ProtocolError) as refused:
            await client.request("tools/call", {"name": "x", "arguments": {}})
    assert refused.value.code == -32021
    assert refused.value.data == {"requiredCapabilities": {}}


@pytest.mark.parametrize(
    "refusal",
    [
        (400, b""),
        (400, b"not json"),
        (404, b"Not Found"),
        (405, b""),
        (400, {"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": "No session"}}),
        (404, {"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "Not found"}}),
    ],
)
async def test_anything_but_a_modern_error_falls_back_to_initialize(refusal: Any) -> None:
    def answer(request: JSONObject, headers: JSONObject) -> Any:
        method = request.get("method")
        if method == "server/discover":
            return refusal
        if method == "initialize":
            result = {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "serverInfo": {"name": "legacy", "version": "1"},
            }
            return 200, {"jsonrpc": "2.0", "id": request["id"], "result": result}
        if method is None or "id" not in request:
            return 202, b""
        return ok(request, {})

    app = raw_app(answer)
    async with serving(app) as base, Client(base + "/mcp", timeout=10) as client:
        assert client.era == "handshake"
        assert client.protocol_version == "2025-06-18"
    methods = [r.get("method") for r, _ in app.seen]
    assert methods[:2] == ["server/discover", "initialize"]


async def test_a_slow_modern_server_over_http_is_not_taken_for_a_legacy_one() -> None:
    # Over HTTP the era is read from the answer; probe_timeout bounds only silent stdio peers.
    inner = raw_app(lambda request, headers: ok(request, DISCOVERED))

    async def slow(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            await asyncio.sleep(0.5)
        await inner(scope, receive, send)

    async with serving(slow) as base, Client(base + "/mcp", timeout=10, probe_timeout=0.1) as c:
        assert c.era == "per-request"
    assert [r.get("method") for r, _ in inner.seen] == ["server/discover"]


async def test_unsupported_version_over_http_reads_the_supported_list() -> None:
    def answer(request: JSONObject, headers: JSONObject) -> Any:
        method = request.get("method")
        if method == "server/discover":
            data = {"supported": ["2099-01-01"], "requested": "2026-07-28"}
            return error(request, 400, -32022, "Unsupported protocol version", data)
        return ok(request, {})

    app = raw_app(answer)
    with pytest.raises(era_module.EraMismatch, match="2099-01-01"):
        async with serving(app) as base, Client(base + "/mcp", timeout=10):
            pass
    assert [r.get("method") for r, _ in app.seen] == ["server/discover"]


async def test_cancelling_a_modern_call_closes_its_stream_and_posts_nothing() -> None:
    disconnected, streaming = asyncio.Event(), asyncio.Event()
    posts: list[str] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        request = orjson.loads((await receive())["body"])
        posts.append(request.get("method"))
        if request.get("method") == "server/discover":
            body = orjson.dumps({"jsonrpc": "2.0", "id": request["id"], "result": DISCOVERED})
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [(b"content-type", b"application/json")],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"text/event-stream")],
            }
        )
        await send({"type": "http.response.body", "body": b": open\n\n", "more_body": True})
        streaming.set()
        while (await receive())["type"] != "http.disconnect":
            pass
        disconnected.set()

    async with serving(app) as base, Client(base + "/mcp", timeout=10) as client:
        call = asyncio.ensure_future(client.request("tools/call", {"name": "slow"}))
        await asyncio.wait_for(streaming.wait(), 5)
        call.cancel()
        await asyncio.wait_for(disconnected.wait(), 5)
        await asyncio.sleep(0.1)  # time for a notifications/cancelled POST, were one sent
    assert posts == ["server/discover", "tools/call"]  # no notifications/cancelled


# -- a handshake-only server: the npm reference server ------------------------------------


@asynccontextmanager
async def everything(mode: str) -> AsyncIterator[str]:
    port = unused_port()
    argv = [*npm_command("mcp-server-everything"), mode]
    env = {**os.environ, **node_env(), "PORT": str(port)}
    process = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"server-everything {mode} did not start")
                await asyncio.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(5)


@pytest.mark.parametrize(("mode", "path"), [("streamableHttp", "/mcp"), ("sse", "/sse")])
async def test_everything_over_http_falls_back(mode: str, path: str) -> None:
    async with everything(mode) as base, Client(base + path, timeout=20) as client:
        assert client.era == "handshake"
        result = await client.call_tool("get-sum", {"a": 2, "b": 3})
        assert "5" in text(result)


async def test_a_url_remembered_as_legacy_that_turned_modern_is_probed_again() -> None:
    def answer(request: JSONObject, headers: JSONObject) -> Any:
        if request.get("method") == "initialize":
            return error(request, 400, -32602, "initialize is not a 2026-07-28 method")
        return ok(request, DISCOVERED if request.get("method") == "server/discover" else {})

    app = raw_app(answer)
    async with serving(app) as base:
        key = era_module.server_key(base + "/mcp")
        assert key is not None
        era_module.ERAS[key] = "handshake"
        async with Client(base + "/mcp", timeout=10) as client:
            assert client.era == "per-request"
        assert era_module.ERAS[key] == "2026-07-28"
    methods = [r.get("method") for r, _ in app.seen]
    assert methods[0] == "initialize"
    assert "server/discover" in methods
