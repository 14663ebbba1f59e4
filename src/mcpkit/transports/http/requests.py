"""Reading an HTTP request for the MCP endpoint: its headers and its body, with their limits.

Headers come from the ASGI scope as a list; the app wants a dict. A header the MCP rules
depend on (any `Mcp-*`, `MCP-Protocol-Version`, `Origin`, `Host`) must appear once: a second
line could carry a value the checks never saw (two `Mcp-Name` lines, an evil `Origin` first).
Building the dict tells it for free: duplicates make it shorter than the list, and only then
is the list searched. Headers beyond a count or a total size are refused (431): some ASGI
servers (uvicorn with httptools) take megabytes of them.
"""

from __future__ import annotations

import asyncio
import functools

from mcpkit.protocol import http as rules
from mcpkit.protocol.http import Body, Refusal
from mcpkit.transports.http.streams import Receive, Send, send_json

Headers = dict[bytes, bytes]
_SINGLE = (b"origin", b"host")


def header_dict(
    raw: list[tuple[bytes, bytes]], max_count: int, max_bytes: int
) -> Headers | Refusal:
    """The request's headers by (lowercase) name; 431 past `max_count` headers or `max_bytes`
    of names and values, 400 for a duplicated header that matters."""
    size = 0
    for name, value in raw:
        size += len(name) + len(value)
    if size > max_bytes or len(raw) > max_count:
        message = (
            f"Request Header Fields Too Large: at most {max_count} headers of {max_bytes} "
            "bytes in all"
        )
        return rules.refusal(431, message)
    headers = dict(raw)
    if len(headers) == len(raw):
        return headers
    seen: set[bytes] = set()
    for name, _ in raw:
        if name in seen and (name[:3] == b"mcp" or name in _SINGLE):
            return rules.refusal(400, f"Bad Request: duplicate {name.decode('latin-1')} header")
        seen.add(name)
    return headers


def text(headers: Headers, name: bytes) -> str | None:
    value = headers.get(name)
    return None if value is None else value.decode("latin-1")


async def read_post(
    receive: Receive, headers: Headers, limit: int, timeout: float | None
) -> tuple[bytes, Body] | Refusal:
    """The body of a POST and what it holds (parsed once), or why it is refused: 406/415 for
    the Accept and Content-Type rules, 413 past `limit` bytes, 408 when the client does not
    finish sending it within `timeout` seconds, 400 for a body that is not JSON-RPC."""
    refused = _post_headers(headers.get(b"accept"), headers.get(b"content-type"))
    refused = refused or rules.check_content_length(text(headers, b"content-length"), limit)
    if refused is not None:
        return refused
    try:
        async with asyncio.timeout(timeout):
            data = await read_body(receive, limit)
    except TimeoutError:
        return rules.refusal(408, f"Request Timeout: the body took longer than {timeout:g} s")
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
