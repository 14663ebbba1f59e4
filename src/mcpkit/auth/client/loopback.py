"""The loopback redirect listener: where the system browser brings the authorization response.

How this works (RFC 8252 section 7.3): `LoopbackListener(port, path)` listens on 127.0.0.1
only, on the given port (0: any free one). `wait(timeout)` serves until one request for
`path` arrives, answers it with a small page saying the window can be closed, and returns the
URL it was called at (its `Host`, path and query); then it stops listening (one-shot). Requests
for other paths get 404 and do not end the wait; a request whose `Host` is not a loopback name is
refused (400), so a web page cannot reach the listener through DNS rebinding.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
from urllib.parse import parse_qs, urlsplit

LOOPBACK_NAMES = ("localhost",)
MAX_HEAD = 16 * 1024
PAGE = (
    "<!doctype html><html><head><meta charset='utf-8'><title>mcpkit</title></head>"
    "<body style='font-family:sans-serif;margin:3em'><h2>{title}</h2>"
    "<p>{text}</p></body></html>"
)


def is_loopback_host(host: str | None) -> bool:
    """127.0.0.0/8, ::1 or localhost."""
    if not host:
        return False
    name = host.strip("[]").lower()
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


class LoopbackListener:
    """A one-shot HTTP listener on 127.0.0.1 for the authorization redirect."""

    def __init__(self, path: str = "/callback") -> None:
        self.path = path
        self.port = 0
        self._server: asyncio.Server | None = None
        self._landed: asyncio.Future[str] | None = None

    async def start(self, port: int = 0) -> int:
        """Start listening; the port bound. Raises OSError when `port` is taken."""
        self._landed = asyncio.get_running_loop().create_future()
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self.port

    async def wait(self, timeout: float) -> str:
        """The URL of the first request for our path. Raises TimeoutError."""
        assert self._landed is not None, "start() first"
        try:
            async with asyncio.timeout(timeout):
                return await asyncio.shield(self._landed)
        finally:
            await self.close()

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
            self._server = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            async with asyncio.timeout(10):
                head = await reader.readuntil(b"\r\n\r\n")
        except (TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            writer.close()
            return
        status, title, text = self._answer(head[:MAX_HEAD].decode("latin-1"))
        body = PAGE.format(title=title, text=text).encode()
        writer.write(
            f"HTTP/1.1 {status}\r\ncontent-type: text/html; charset=utf-8\r\n"
            f"content-length: {len(body)}\r\ncache-control: no-store\r\n"
            "referrer-policy: no-referrer\r\nconnection: close\r\n\r\n".encode()
            + body
        )
        with contextlib.suppress(ConnectionError):
            await writer.drain()
        writer.close()

    def _answer(self, head: str) -> tuple[str, str, str]:
        lines = head.split("\r\n")
        parts = lines[0].split(" ")
        headers = {
            name.strip().lower(): value.strip()
            for name, sep, value in (line.partition(":") for line in lines[1:])
            if sep
        }
        host = urlsplit(f"//{headers.get('host', '')}").hostname
        if len(parts) != 3 or not is_loopback_host(host):
            return "400 Bad Request", "Bad request", "This listener only answers on loopback."
        method, target = parts[0], parts[1]
        if method != "GET" or urlsplit(target).path != self.path:
            return "404 Not Found", "Not found", "Nothing here."
        if self._landed is not None and not self._landed.done():
            self._landed.set_result(f"http://{headers['host']}{target}")
        if "error" in parse_qs(urlsplit(target).query):  # denied, or the server refused
            return (
                "200 OK",
                "Authorization not given",
                "The application was not authorized. You can close this window.",
            )
        return (
            "200 OK",
            "Authorization received",
            "You can close this window and return to the application.",
        )
