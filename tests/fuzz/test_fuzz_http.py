"""The HTTP request fuzzer: the Streamable HTTP app (legacy SSE endpoints on) driven through
its ASGI interface with mutated methods, paths, headers (missing, duplicated, junk values,
other revisions, foreign hosts and origins) and bodies (requests of both eras, junk).
Invariants on every example: the status is one the spec or docs/limits.md names (never a
500), no body leaks a traceback or a path, the app still answers a well-formed 2026-07-28
call afterwards, and the sessions stay under their cap."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.conftest import FUZZ
from tests.fuzz.corpus import entries, remember
from tests.fuzz.frames import ENVELOPE, MODERN, junk, valid_request
from tests.fuzz.server import server

ALLOWED = {200, 202, 204, 400, 403, 404, 405, 406, 408, 413, 415, 421, 422, 431, 503}
MAX_SESSIONS = 20
VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", MODERN, "1999-01-01", ""]
HOST = (b"host", b"127.0.0.1:8000")

header_values = st.one_of(
    st.sampled_from(VERSIONS),
    st.text(max_size=40),
    st.sampled_from(["application/json", "text/event-stream", "*/*", "text/plain"]),
    st.just("application/json, text/event-stream"),
    st.just("x" * 9000),
)
header_names = st.sampled_from(
    [
        "content-type",
        "accept",
        "mcp-session-id",
        "mcp-protocol-version",
        "mcp-method",
        "mcp-name",
        "origin",
        "host",
        "last-event-id",
        "authorization",
        "x-custom",
    ]
)


@st.composite
def requests(draw: st.DrawFn) -> dict[str, Any]:
    era = draw(st.sampled_from(["2025-11-25", MODERN]))
    headers = [
        HOST,
        (b"content-type", b"application/json"),
        (b"accept", b"application/json, text/event-stream"),
        (b"mcp-protocol-version", era.encode()),
    ]
    for _ in range(draw(st.integers(min_value=0, max_value=4))):
        change = draw(st.sampled_from(["drop", "add", "replace"]))
        if change == "drop" and headers:
            headers.pop(draw(st.integers(min_value=0, max_value=len(headers) - 1)))
        else:
            name = draw(header_names).encode()
            value = draw(header_values).encode("utf-8", "replace")
            if change == "replace":
                headers = [h for h in headers if h[0] != name]
            headers.append((name, value))
    body = draw(st.one_of(valid_request("r", era), junk, st.just(b"")))
    return {
        "method": draw(
            st.sampled_from(["POST", "POST", "POST", "GET", "DELETE", "PUT", "OPTIONS"])
        ),
        "path": draw(st.sampled_from(["/mcp", "/mcp/", "/sse", "/messages/", "/", "/mcp/x"])),
        "headers": [[n.decode("latin-1"), v.decode("latin-1")] for n, v in headers],
        "body": body.decode("latin-1"),
    }


async def drive(app: Any, request: dict[str, Any], wait: float = 2.0) -> tuple[int, bytes]:
    """One request through the ASGI interface; (status, body). A stream still open after
    `wait` seconds (an SSE GET) is cut: its status counts, the body so far."""
    body = request["body"].encode("latin-1")
    scope = {
        "type": "http",
        "method": request["method"],
        "path": request["path"],
        "root_path": "",
        "query_string": b"",
        "headers": [(n.encode("latin-1"), v.encode("latin-1")) for n, v in request["headers"]],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
        "scheme": "http",
        "http_version": "1.1",
    }
    sent = False
    status = 0
    chunks: list[bytes] = []

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))

    task = asyncio.ensure_future(app(scope, receive, send))
    done, _ = await asyncio.wait([task], timeout=wait)
    if not done:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        assert status == 200, f"no answer within {wait} s to {request['method']} {request['path']}"
    else:
        task.result()  # an exception out of the app is a failure
    return status, b"".join(chunks)


def check(status: int, body: bytes) -> None:
    assert status in ALLOWED, f"HTTP {status}: {body[:300]!r}"
    text = body.decode("utf-8", "replace")
    assert "Traceback" not in text and "/work/" not in text and '.py"' not in text, text[:300]


async def still_serves(app: Any) -> None:
    call = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "add", "arguments": {"a": 40, "b": 2}, "_meta": ENVELOPE},
    }
    headers = [
        ["host", "127.0.0.1:8000"],
        ["content-type", "application/json"],
        ["accept", "application/json, text/event-stream"],
        ["mcp-protocol-version", MODERN],
        ["mcp-method", "tools/call"],
        ["mcp-name", "add"],
    ]
    request = {
        "method": "POST",
        "path": "/mcp",
        "headers": headers,
        "body": orjson.dumps(call).decode(),
    }
    status, body = await drive(app, request)
    assert status == 200 and orjson.loads(body)["result"]["structuredContent"] == {"result": 42}


async def run_example(request: dict[str, Any]) -> None:
    app = APP
    status, body = await drive(app, request)
    check(status, body)
    await still_serves(app)
    assert len(app.sessions.sessions) <= MAX_SESSIONS


APP = server.http_app(http_sse=True, max_sessions=MAX_SESSIONS, body_timeout=2.0)
# One loop for the whole run, as a server has: sessions and streams of one example are still
# there for the next.
LOOP = asyncio.new_event_loop()


@FUZZ
@given(request=requests())
def test_http_requests(request: dict[str, Any]) -> None:
    try:
        LOOP.run_until_complete(run_example(request))
    except AssertionError:
        remember("http", request)
        raise


@pytest.mark.parametrize(("name", "entry"), entries("http") or [("none", None)])
def test_http_corpus(name: str, entry: dict[str, Any] | None) -> None:
    if entry is not None:  # an empty corpus: nothing found yet
        LOOP.run_until_complete(run_example(entry))
