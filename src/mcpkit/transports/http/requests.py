"""Reading an HTTP request for the MCP endpoint: its headers and its body, with their limits.

Headers come from the ASGI scope as a list; the app wants a dict (`HeaderLimits` in
wrappers.py builds it, within its limits). A header the MCP rules depend on (any `Mcp-*`,
`MCP-Protocol-Version`, `Origin`, `Host`, `Authorization`) must appear once: a second line
could carry a value the checks never saw (two `Mcp-Name` lines, an evil `Origin` first).
Building the dict tells it for free: duplicates make it shorter than the list, and only then
is the list searched (`duplicate_refusal`).
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any

from mcpkit.protocol import http as rules
from mcpkit.protocol.http import Body, Refusal
from mcpkit.transports.http.streams import Receive, Send, send_json

Headers = dict[bytes, bytes]
_SINGLE = (b"origin", b"host", b"authorization")


def duplicate_refusal(raw: list[tuple[bytes, bytes]]) -> Refusal | None:
    """400 when a header that matters came more than once (called only when the header dict
    came out shorter than the list)."""
    seen: set[bytes] = set()
    for name, _ in raw:
        if name in seen and (name[:3] == b"mcp" or name in _SINGLE):
            return rules.refusal(400, f"Bad Request: duplicate {name.decode('latin-1')} header")
        seen.add(name)
    return None


def text(headers: Headers, name: bytes) -> str | None:
    value = headers.get(name)
    return None if value is None else value.decode("latin-1")


class BodyClock:
    """Cuts off POST bodies that take longer than `timeout` seconds to arrive (slowloris).

    One timer for the whole app, running only while some body is being read; a request costs
    two dict updates. (`asyncio.timeout` per request costs a timer handle and a heap entry
    each time: several microseconds on every call, measured with bench/app_cost.py.)
    """

    def __init__(self, timeout: float | None) -> None:
        self.timeout = timeout
        self._reading: dict[asyncio.Task[Any], float] = {}  # task -> its deadline
        self._expired: set[asyncio.Task[Any]] = set()
        self._handle: asyncio.TimerHandle | None = None

    async def read(self, receive: Receive, limit: int) -> bytes | None:
        """The body (None past `limit` bytes). Raises TimeoutError past `timeout`."""
        timeout = self.timeout
        task = asyncio.current_task()
        if timeout is None or task is None:
            return await read_body(receive, limit)
        loop = asyncio.get_running_loop()
        self._reading[task] = loop.time() + timeout
        if self._handle is None:
            self._handle = loop.call_later(_tick_period(timeout), self._tick)
        try:
            return await read_body(receive, limit)
        except asyncio.CancelledError:
            if task in self._expired:
                self._expired.discard(task)
                if task.uncancel() == 0:
                    raise TimeoutError from None
            raise
        finally:
            self._reading.pop(task, None)

    def _tick(self) -> None:
        self._handle = None
        loop = asyncio.get_running_loop()
        now = loop.time()
        for task, deadline in list(self._reading.items()):
            if deadline <= now:
                del self._reading[task]
                self._expired.add(task)
                task.cancel()
        if self._reading and self.timeout is not None:
            self._handle = loop.call_later(_tick_period(self.timeout), self._tick)


def _tick_period(timeout: float) -> float:
    return min(max(timeout / 4, 0.05), 1.0)


async def read_post(
    receive: Receive, headers: Headers, limit: int, clock: BodyClock
) -> tuple[bytes, Body] | Refusal:
    """The body of a POST and what it holds (parsed once), or why it is refused: 406/415 for
    the Accept and Content-Type rules, 413 past `limit` bytes, 408 when the client does not
    finish sending it in time (`clock`), 400 for a body that is not JSON-RPC."""
    refused = _post_headers(headers.get(b"accept"), headers.get(b"content-type"))
    refused = refused or rules.check_content_length(text(headers, b"content-length"), limit)
    if refused is not None:
        return refused
    try:
        data = await clock.read(receive, limit)
    except TimeoutError:
        message = f"Request Timeout: the body took longer than {clock.timeout:g} s"
        return rules.refusal(408, message)
    if data is None:
        return rules.too_large(limit)
    body = rules.inspect_body(data)
    if type(body) is Refusal:
        return body
    return data, body  # type: ignore[return-value]


async def read_body(receive: Receive, limit: int) -> bytes | None:
    """The whole body; None past `limit` bytes."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return b"".join(chunks)
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return chunks[0] if len(chunks) == 1 else b"".join(chunks)


@functools.lru_cache(maxsize=64)
def _post_headers(accept: bytes | None, content_type: bytes | None) -> Refusal | None:
    return rules.check_post_headers(
        None if accept is None else accept.decode("latin-1"),
        None if content_type is None else content_type.decode("latin-1"),
    )


async def refuse(send: Send, refused: Refusal) -> None:
    await send_json(send, refused.status, refused.body, list(refused.headers))
