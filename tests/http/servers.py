"""Real HTTP peers for the client tests: uvicorn on 127.0.0.1, an ephemeral port, in process."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import uvicorn

# A handshake-era initialize POST (headers and body), for tests that speak raw HTTP.
ACCEPT = {"accept": "application/json, text/event-stream"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "http-test", "version": "1"},
    },
}


@contextlib.asynccontextmanager
async def serving(app: Any, port: int = 0, host: str = "127.0.0.1") -> AsyncIterator[str]:
    """Serve an ASGI app on `host` (a loopback address; at `port`, else an ephemeral one);
    yields its base URL (no trailing slash)."""
    config = uvicorn.Config(
        app, host=host, port=port, log_level="warning", lifespan="auto", ws="none"
    )
    server = uvicorn.Server(config)
    task = asyncio.get_running_loop().create_task(server.serve())
    while not server.started:
        if task.done():
            task.result()
        await asyncio.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://{host}:{port}"
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 5)


@contextlib.contextmanager
def script_serving(script: str | Path, *arguments: str) -> Iterator[str]:
    """A server script run as `python SCRIPT [ARGUMENTS...] PORT` (Streamable HTTP on
    127.0.0.1 at PORT, an unused one) for as long as the block runs; yields its `/mcp` URL."""
    port = unused_port()
    root = Path(__file__).resolve().parents[2]
    argv = [sys.executable, str(script), *arguments, str(port)]
    process = subprocess.Popen(argv, cwd=root)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        wait_until_listening(url)
        yield url
    finally:
        process.terminate()
        process.wait(10)


def wait_until_listening(url: str, seconds: float = 6.0) -> None:
    """Block until something answers HTTP at `url` (a server process starting up)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.TransportError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.02)


async def status_becomes(url: str, wanted: int, seconds: float = 30) -> httpx.Response:
    """Probe `url` (as an orchestrator does, every 50 ms) until it answers `wanted`."""
    deadline = time.monotonic() + seconds
    async with httpx.AsyncClient(timeout=5) as http:
        while True:
            answer = await http.get(url)
            if answer.status_code == wanted or time.monotonic() > deadline:
                return answer
            await asyncio.sleep(0.05)


def unused_port() -> int:
    """A port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Wiretap:
    """ASGI middleware noting each HTTP exchange: request method, path, headers and JSON body;
    answer status, content type, the JSON-RPC messages it carried (a JSON body or an event
    stream's data) and among them the response to the request (`answer`). A body or an event
    that is not JSON (the legacy transport's `endpoint` event) is noted as None / skipped."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.seen: list[dict[str, Any]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        entry: dict[str, Any] = {
            "method": scope["method"],
            "path": scope["path"],
            "headers": {k.decode().lower(): v.decode() for k, v in scope["headers"]},
            "body": None,
            "status": None,
            "content_type": None,
            "messages": [],
            "answer": None,
        }
        self.seen.append(entry)
        request_body = bytearray()
        answer_body = bytearray()

        async def noting_receive() -> Any:
            message = await receive()
            if message["type"] == "http.request":
                request_body.extend(message.get("body", b""))
                if not message.get("more_body") and request_body:
                    entry["body"] = _json_or_none(request_body)
            return message

        async def noting_send(message: Any) -> None:
            if message["type"] == "http.response.start":
                entry["status"] = message["status"]
                headers = {k.decode().lower(): v.decode() for k, v in message["headers"]}
                entry["content_type"] = headers.get("content-type", "").split(";")[0] or None
            elif message["type"] == "http.response.body":
                answer_body.extend(message.get("body", b""))
                if not message.get("more_body"):
                    self.note_answer(entry, answer_body.decode())
            await send(message)

        await self.app(scope, receive=noting_receive, send=noting_send)

    @staticmethod
    def note_answer(entry: dict[str, Any], text: str) -> None:
        if entry["content_type"] == "application/json" and text:
            message = _json_or_none(text)
            entry["messages"] = [] if message is None else [message]
        elif entry["content_type"] == "text/event-stream":
            for block in text.replace("\r\n", "\n").split("\n\n"):
                data = [line[5:].lstrip() for line in block.split("\n") if line.startswith("data:")]
                message = _json_or_none("\n".join(data)) if data else None
                if message is not None:
                    entry["messages"].append(message)
        request_id = entry["body"].get("id") if isinstance(entry["body"], dict) else None
        for message in entry["messages"]:
            if not isinstance(message, dict):
                continue
            if message.get("id") == request_id and ("result" in message or "error" in message):
                entry["answer"] = message

    def posts(self, rpc_method: str | None = None) -> list[dict[str, Any]]:
        """POSTed JSON-RPC requests (of `rpc_method` when given), in order."""
        return [
            entry
            for entry in self.seen
            if entry["method"] == "POST"
            and isinstance(entry["body"], dict)
            and "method" in entry["body"]
            and rpc_method in (None, entry["body"]["method"])
        ]

    def calls_to(self, tool: str) -> list[dict[str, Any]]:
        return [e for e in self.posts("tools/call") if e["body"]["params"]["name"] == tool]


def _json_or_none(text: str | bytes | bytearray) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None
