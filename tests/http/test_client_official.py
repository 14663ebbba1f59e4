"""mcpkit's client over Streamable HTTP against the official SDK's server (mcp 2.3.0), in process.

Stateful JSON, stateful SSE and stateless modes; the 2024-11-05 HTTP+SSE app through the
fallback; and what the client puts on the wire (headers, session id, GET stream, DELETE).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
import pytest

from mcpkit import Client
from mcpkit.errors import ConnectionClosed
from mcpkit.transports.http.client import StreamableHTTPTransport
from mcpkit.transports.http.http_sse_client import HTTPSSETransport

from . import official_app
from .servers import Wiretap, serving, unused_port

pytestmark = pytest.mark.interop

MODES = {
    "stateful-json": {"json_response": True},
    "stateful-sse": {},
    "stateless": {"stateless": True},
}


async def exercise(client: Client) -> None:
    echoed = await client.request("tools/call", {"name": "echo", "arguments": {"text": "héllo"}})
    assert echoed["content"] == [{"type": "text", "text": "héllo"}]
    started = time.perf_counter()
    calls = [
        client.request("tools/call", {"name": "slow", "arguments": {"seconds": 0.3}})
        for _ in range(4)
    ]
    answers = await asyncio.gather(*calls)
    assert [a["content"][0]["text"] for a in answers] == ["done"] * 4
    assert time.perf_counter() - started < 0.9  # four POSTs in flight at once
    await client.ping()


@pytest.mark.parametrize("mode", list(MODES))
async def test_modes(mode: str) -> None:
    recorder = Wiretap(official_app.streamable(**MODES[mode]))
    async with (
        serving(recorder) as base,
        Client(base + "/mcp", timeout=10, mode="handshake") as client,
    ):
        assert client.server_info["name"] == "official-http"
        assert client.protocol_version == "2025-11-25"
        await exercise(client)
        if mode != "stateful-json":  # a JSON answer carries no progress
            progress: list[float] = []
            chatty = {"name": "chatty", "arguments": {"steps": 3}}
            answer = await client.request(
                "tools/call", chatty, on_progress=lambda p, t, m: progress.append(p)
            )
            assert answer["content"][0]["text"] == "chatted"
            assert progress == [1, 2, 3]

    posts = [e for e in recorder.seen if e["method"] == "POST"]
    assert all(
        e["headers"]["accept"] == "application/json, text/event-stream"
        and e["headers"]["content-type"] == "application/json"
        for e in posts
    )
    assert VERSION not in posts[0]["headers"]
    assert all(e["headers"][VERSION] == "2025-11-25" for e in recorder.seen[1:])
    if mode == "stateless":
        assert not any(SESSION in e["headers"] for e in recorder.seen)
    else:
        session = posts[1]["headers"][SESSION]
        assert all(e["headers"][SESSION] == session for e in recorder.seen[1:])
        assert recorder.seen[-1]["method"] == "DELETE"


VERSION = "mcp-protocol-version"
SESSION = "mcp-session-id"


async def test_get_stream_carries_unrelated_messages() -> None:
    recorder = Wiretap(official_app.streamable())
    changed = asyncio.Event()

    async def on_list_changed(kind: str) -> None:
        changed.set()

    async with serving(recorder) as base:
        async with Client(
            base + "/mcp", on_list_changed=on_list_changed, mode="handshake"
        ) as client:
            await client.request("tools/call", {"name": "later", "arguments": {}})
            await asyncio.wait_for(changed.wait(), 5)
        gets = [e for e in recorder.seen if e["method"] == "GET"]
        assert gets and gets[0]["headers"]["accept"] == "text/event-stream"
        assert gets[0]["status"] == 200


async def test_delete_on_close_ends_the_session() -> None:
    recorder = Wiretap(official_app.streamable())
    async with serving(recorder) as base:
        async with Client(base + "/mcp", mode="handshake") as client:
            await client.ping()
        session = recorder.seen[-1]["headers"][SESSION]
        assert recorder.seen[-1]["method"] == "DELETE"
        assert recorder.seen[-1]["status"] == 200
        async with httpx.AsyncClient() as http:
            after = await http.post(
                base + "/mcp",
                json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                headers={"accept": "application/json, text/event-stream", SESSION: session},
            )
        assert after.status_code == 404


async def test_session_ended_by_the_server_is_a_clear_connection_closed() -> None:
    async with serving(official_app.streamable()) as base:
        transport = StreamableHTTPTransport(base + "/mcp")
        async with Client(transport) as client:
            assert transport.session_id is not None
            async with httpx.AsyncClient() as http:
                await http.delete(base + "/mcp", headers={SESSION: transport.session_id})
            with pytest.raises(ConnectionClosed, match="ended the session"):
                await client.ping()
            with pytest.raises(ConnectionClosed, match="404"):
                await client.ping()


async def test_renew_session_starts_a_new_one_and_resends() -> None:
    recorder = Wiretap(official_app.streamable())
    async with serving(recorder) as base:
        transport = StreamableHTTPTransport(base + "/mcp", renew_session=True)
        async with Client(transport) as client:
            old = transport.session_id
            assert old is not None
            async with httpx.AsyncClient() as http:
                await http.delete(base + "/mcp", headers={SESSION: old})
            echo = {"name": "echo", "arguments": {"text": "again"}}
            answer = await client.request("tools/call", echo)
            assert answer["content"][0]["text"] == "again"
            assert transport.session_id not in (None, old)
            await client.ping()
    inits = [e for e in recorder.seen if e["method"] == "POST" and SESSION not in e["headers"]]
    assert len(inits) == 2  # the first handshake and the renewal, both without a session id
    assert all(VERSION not in e["headers"] for e in inits)


async def test_custom_headers_and_auth_hook() -> None:
    class Token(httpx.Auth):
        def __init__(self) -> None:
            self.flows = 0

        def auth_flow(self, request: httpx.Request) -> Any:
            self.flows += 1
            request.headers["authorization"] = "Bearer sesame"
            yield request

    auth = Token()
    recorder = Wiretap(official_app.streamable(json_response=True))
    async with serving(recorder) as base:
        transport = StreamableHTTPTransport(base + "/mcp", headers={"x-team": "blue"}, auth=auth)
        async with Client(transport) as client:
            await client.ping()
    assert auth.flows == len(recorder.seen) >= 3
    for entry in recorder.seen:
        assert entry["headers"]["x-team"] == "blue"
        assert entry["headers"]["authorization"] == "Bearer sesame"


async def test_unreachable_server_names_the_url() -> None:
    url = f"http://127.0.0.1:{unused_port()}/mcp"
    with pytest.raises(ConnectionClosed, match=f"could not connect to {url}"):
        async with Client(url, timeout=5, mode="handshake"):
            pass


async def test_falls_back_to_http_sse() -> None:
    recorder = Wiretap(official_app.legacy())
    async with (
        serving(recorder) as base,
        Client(base + "/sse", timeout=10, mode="handshake") as client,
    ):
        assert client.server_info["name"] == "official-http"
        await exercise(client)
        progress: list[float] = []
        chatty = {"name": "chatty", "arguments": {"steps": 2}}
        await client.request("tools/call", chatty, on_progress=lambda p, t, m: progress.append(p))
        assert progress == [1, 2]
    first, second = recorder.seen[:2]
    assert (first["method"], first["path"], first["status"]) == ("POST", "/sse", 405)
    assert (second["method"], second["path"], second["status"]) == ("GET", "/sse", 200)
    assert all(e["path"] == "/messages/" for e in recorder.seen[2:])


async def test_neither_transport_is_a_clear_error() -> None:
    async def not_found(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        await send({"type": "http.response.start", "status": 404, "headers": []})
        await send({"type": "http.response.body", "body": b"no"})

    async with serving(not_found) as base:
        with pytest.raises(ConnectionClosed, match="not an HTTP\\+SSE server either"):
            async with Client(base + "/mcp", timeout=5):
                pass


async def test_http_sse_directly() -> None:
    async with serving(official_app.legacy()) as base:
        transport = await HTTPSSETransport.open(base + "/sse", headers={"x-team": "red"})
        assert transport.endpoint.startswith(base + "/messages/?session_id=")
        async with Client(transport) as client:
            assert client.server_info["name"] == "official-http"
            await exercise(client)


async def test_an_endpoint_on_another_origin_is_refused() -> None:
    async def elsewhere(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        if scope["method"] == "POST":
            await send({"type": "http.response.start", "status": 405, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        headers = [(b"content-type", b"text/event-stream")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        event = b"event: endpoint\ndata: http://elsewhere.example/messages\n\n"
        await send({"type": "http.response.body", "body": event})

    async with serving(elsewhere) as base:
        with pytest.raises(ConnectionClosed, match="endpoint on another origin"):
            async with Client(base + "/sse", timeout=5):
                pass
