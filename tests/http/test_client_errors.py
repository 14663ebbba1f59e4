"""What the HTTP client makes of a server that answers oddly: each odd answer fails only the
request it belongs to (as a ProtocolError), and the connection carries on.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from mcpkit import Client
from mcpkit.errors import ProtocolError

from .servers import serving


async def odd_server(scope: Any, receive: Any, send: Any) -> None:
    """Initializes normally; tools/call answers according to the tool's name."""
    if scope["type"] != "http":
        return
    if scope["method"] != "POST":
        await reply(send, 405 if scope["method"] == "GET" else 200)
        return
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    request = orjson.loads(body)
    request_id = request.get("id")
    if request_id is None:
        await reply(send, 202)
        return
    if request["method"] == "initialize":
        result = {
            "protocolVersion": "2025-03-26",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "odd", "version": "0"},
        }
        await reply(send, 200, answer(request_id, result))
        return
    name = request.get("params", {}).get("name")
    if name == "http500":
        error = {"jsonrpc": "2.0", "error": {"code": -32099, "message": "boom"}}
        await reply(send, 500, orjson.dumps(error))
    elif name == "accepted":
        await reply(send, 202)
    elif name == "plain":
        await reply(send, 200, b"hello", kind=b"text/plain")
    elif name == "batch":
        items = [
            {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info"}},
            {"jsonrpc": "2.0", "id": request_id, "result": {"content": [], "batch": True}},
        ]
        await reply(send, 200, orjson.dumps(items))
    else:
        await reply(send, 200, answer(request_id, {"content": []}))


def answer(request_id: Any, result: Any) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "id": request_id, "result": result})


async def reply(
    send: Any, status: int, body: bytes = b"", kind: bytes = b"application/json"
) -> None:
    headers = [(b"content-type", kind)] if body else []
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def call(name: str) -> dict[str, Any]:
    return {"name": name, "arguments": {}}


async def test_odd_answers_fail_only_their_request() -> None:
    async with serving(odd_server) as base, Client(base + "/mcp", timeout=5) as client:
        assert client.protocol_version == "2025-03-26"
        with pytest.raises(ProtocolError, match="HTTP 500: boom") as failed:
            await client.request("tools/call", call("http500"))
        assert failed.value.code == -32099
        with pytest.raises(ProtocolError, match="HTTP 202 and no JSON-RPC answer"):
            await client.request("tools/call", call("accepted"))
        with pytest.raises(ProtocolError, match="content type 'text/plain'"):
            await client.request("tools/call", call("plain"))
        batch = await client.request("tools/call", call("batch"))
        assert batch["batch"] is True
        assert await client.request("tools/call", call("fine")) == {"content": []}
