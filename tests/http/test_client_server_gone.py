"""An HTTP server that goes away (issue 22, item 2): a real uvicorn subprocess killed while a
call is in flight, or while the client is idle.

What a transport-level failure means (decided in transports/http/client.py): when the
connection carrying a request breaks and the server then refuses a new connection, the
server is gone: the transport closes, every request still waiting raises ConnectionClosed,
later ones too, and `wait_closed()` resolves with the reason at once (the Host watches it).
A connection that breaks while the server still accepts new ones fails only that request
(ProtocolError) and the client carries on.
"""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from mcpkit import Client
from mcpkit.client import era as era_module
from mcpkit.errors import ConnectionClosed, ProtocolError

from .servers import serving, unused_port, wait_until_listening

SCRIPT = Path(__file__).resolve().parent / "run_dying_server.py"
ROOT = Path(__file__).resolve().parents[2]
SETTLE = 20.0  # generous bound on awaiting what must happen at once (a loaded machine)
MODES = ["handshake", "auto"]  # a handshake session, and 2026-07-28


@pytest.fixture(autouse=True)
def fresh_era_cache() -> Iterator[None]:
    era_module.ERAS.clear()
    yield
    era_module.ERAS.clear()


@contextlib.contextmanager
def dying_server() -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    port = unused_port()
    process = subprocess.Popen([sys.executable, str(SCRIPT), str(port)], cwd=ROOT)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        wait_until_listening(url, seconds=20)
        yield url, process
    finally:
        process.kill()
        process.wait(10)


@contextlib.asynccontextmanager
async def connected(mode: str) -> AsyncIterator[tuple[Client, subprocess.Popen[bytes], str]]:
    with dying_server() as (url, process):
        async with Client(url, mode=mode, timeout=60) as client:
            assert client.era == ("handshake" if mode == "handshake" else "per-request")
            yield client, process, url


async def started(client: Client, tool: str) -> asyncio.Task[Any]:
    """A call of `tool` in flight (the server has it: it answered a later call)."""
    call = asyncio.get_running_loop().create_task(client.call_tool(tool, {"seconds": 60}))
    try:
        await hello(client)
    except BaseException:
        call.cancel()
        raise
    return call


async def hello(client: Client) -> None:
    assert (await client.call_tool("hello")).content[0].text == "hi"  # type: ignore[union-attr]


def kill(process: subprocess.Popen[bytes]) -> None:
    process.kill()
    process.wait(10)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("tool", ["slow", "streamed"])
async def test_a_call_in_flight_raises_connection_closed_and_the_client_knows(
    mode: str, tool: str
) -> None:
    async with connected(mode) as (client, process, url):
        closed = asyncio.get_running_loop().create_task(client.wait_closed())
        call = await started(client, tool)
        kill(process)
        with pytest.raises(ConnectionClosed, match="the server is gone") as failed:
            await asyncio.wait_for(call, SETTLE)
        assert url in str(failed.value)
        reason = await asyncio.wait_for(closed, SETTLE)
        assert url in reason and "the server is gone" in reason
        with pytest.raises(ConnectionClosed):
            await client.call_tool("hello")


async def test_an_idle_handshake_session_knows_when_its_get_stream_cannot_be_reopened() -> None:
    async with connected("handshake") as (client, process, url):
        closed = asyncio.get_running_loop().create_task(client.wait_closed())
        await hello(client)
        kill(process)
        reason = await asyncio.wait_for(closed, SETTLE)  # no request needed: the GET stream
        assert url in reason and "the server is gone" in reason
        with pytest.raises(ConnectionClosed):
            await client.call_tool("hello")


async def test_an_idle_modern_client_learns_it_at_the_next_request() -> None:
    # 2026-07-28 has no standing connection: the next request finds the server gone.
    async with connected("auto") as (client, process, url):
        kill(process)
        with pytest.raises(ConnectionClosed, match="could not connect"):
            await client.call_tool("hello")
        assert url in await asyncio.wait_for(client.wait_closed(), SETTLE)


# -- a broken connection to a server that is still there --------------------------------------


async def breaking_server(scope: Any, receive: Any, send: Any) -> None:
    """A 2026-07-28 server whose tools/call answer starts an event stream and then drops the
    connection (the app raises mid-response); the server itself stays up."""
    if scope["type"] != "http":
        return
    if scope["method"] != "POST":
        await send({"type": "http.response.start", "status": 405, "headers": []})
        await send({"type": "http.response.body", "body": b""})
        return
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    request = orjson.loads(body)
    if request["method"] == "tools/call":
        headers = [(b"content-type", b"text/event-stream")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b": starting\n\n", "more_body": True})
        raise RuntimeError("dropped mid-answer")
    result = {
        "resultType": "complete",
        "supportedVersions": ["2026-07-28"],
        "capabilities": {"tools": {}},
    }
    answer = orjson.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result})
    headers = [(b"content-type", b"application/json")]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": answer})


async def test_a_broken_connection_to_a_live_server_fails_only_its_request() -> None:
    async with serving(breaking_server) as base, Client(base + "/mcp", timeout=10) as client:
        assert client.era == "per-request"
        with pytest.raises(ProtocolError, match="broke") as failed:
            await client.request("tools/call", {"name": "x", "arguments": {}})
        assert not isinstance(failed.value, ConnectionClosed)
        await client.ping()  # still connected: server/discover answered
