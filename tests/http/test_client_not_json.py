"""What the HTTP client makes of bodies and events that carry no JSON-RPC (issue 22, item 4).

Normal traffic is not a problem: the empty priming event a 2025-11-25 server starts each
stream with (an id, a `retry`, empty data), and the empty 202 that accepts a notification
while saying `application/json` (the official SDK's does). Neither is logged. Something that
is truly not JSON is logged naming the server, without the stdio hint ("stdout is for MCP
messages only"), which stays with stdio, where it belongs.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from mcpkit import Client

from . import official_app
from .servers import serving

NOT_JSON = "not JSON-RPC"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def problems(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if NOT_JSON in r.getMessage()]


async def read_body(receive: Any) -> bytes:
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            return body


def make_priming_server(garbage: bytes = b"") -> Any:
    """A 2025-11-25 session server: every answer is an event stream that starts with a
    priming event; notifications get an empty 202 labelled application/json. `garbage`, when
    given, is sent as a message event before the answer to tools/call."""
    counter = iter(range(1, 1_000_000))

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        if scope["method"] != "POST":
            await send({"type": "http.response.start", "status": 405, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        request = orjson.loads(await read_body(receive))
        json_headers = [(b"content-type", b"application/json"), (b"mcp-session-id", b"s1")]
        if "id" not in request:
            await send({"type": "http.response.start", "status": 202, "headers": json_headers})
            await send({"type": "http.response.body", "body": b""})
            return
        if request["method"] == "initialize":
            result: Any = {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "priming", "version": "1"},
            }
        else:
            result = {"content": [{"type": "text", "text": "ok"}]}
        headers = [(b"content-type", b"text/event-stream"), (b"mcp-session-id", b"s1")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        events = [f"id: {next(counter)}\nretry: 1000\ndata: \n\n".encode()]  # priming
        if garbage and request["method"] == "tools/call":
            events.append(b"event: message\ndata: " + garbage + b"\n\n")
        answer = orjson.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result})
        events.append(f"id: {next(counter)}\ndata: ".encode() + answer + b"\n\n")
        for event in events:
            await send({"type": "http.response.body", "body": event, "more_body": True})
        await send({"type": "http.response.body", "body": b""})

    return app


async def test_priming_events_and_empty_accepted_bodies_are_not_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="mcpkit")
    async with serving(make_priming_server()) as base, Client(base + "/mcp") as client:
        assert client.protocol_version == "2025-11-25"
        for _ in range(3):
            assert (await client.call_tool("x")).content[0].text == "ok"  # type: ignore[union-attr]
    assert problems(caplog) == []


async def test_the_official_sdk_server_over_http_logs_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="mcpkit")
    async with (
        serving(official_app.streamable()) as base,
        Client(base + "/mcp", mode="handshake", timeout=10) as client,
    ):
        await client.call_tool("chatty", {"steps": 2})
        await client.list_tools()
    assert problems(caplog) == []


async def test_a_body_that_is_not_json_is_logged_without_the_stdio_hint(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="mcpkit")
    server = make_priming_server(garbage=b"<html>oops</html>")
    async with serving(server) as base, Client(base + "/mcp", timeout=10) as client:
        assert (await client.call_tool("x")).content[0].text == "ok"  # type: ignore[union-attr]
    [logged] = problems(caplog)
    assert base in logged and "<html>oops</html>" in logged
    assert "stdout" not in logged


async def test_the_stdio_warning_keeps_its_hint(
    caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    caplog.set_level(logging.WARNING, logger="mcpkit")
    script = tmp_path / "chatty_start.py"
    plain = FIXTURES / "plain_stdio_server.py"
    script.write_text(
        f"import runpy\nprint('booting...', flush=True)\nrunpy.run_path({str(plain)!r}, "
        "run_name='__main__')\n"
    )
    async with Client([sys.executable, str(script)], mode="handshake", timeout=20) as client:
        assert client.server_info["name"]
    [logged] = problems(caplog)
    assert "booting..." in logged and "stdout is for MCP messages only" in logged
