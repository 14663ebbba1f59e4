"""Fetching a small JSON document an operator configured (a JWKS, an introspection answer):
bounded in size and time, never followed through redirects, failing with one exception.

(A document whose URL an untrusted client chose needs more: see `server/fetch.py`, which adds
the SSRF guard and uses `read_limited` from here.)
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from mcpkit._extras import optional_dependency
from mcpkit.auth.untrusted_json import NestedTooDeep, loads
from mcpkit.errors import MCPError

if TYPE_CHECKING:  # imported where a document is fetched: the AS loads this module without it
    import httpx

MAX_BYTES = 1024 * 1024
TIMEOUT = 5.0


class DocumentUnavailable(MCPError):
    """The document could not be had; the message names what went wrong, never a secret."""


async def read_limited(response: httpx.Response, limit: int) -> bytes:
    """The body of a streamed `response`, refused past `limit` bytes (declared or counted).

    Raises DocumentUnavailable.
    """
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise DocumentUnavailable(f"the document is larger than {limit} bytes")
    body = bytearray()
    async for chunk in response.aiter_raw():
        body.extend(chunk)
        if len(body) > limit:
            raise DocumentUnavailable(f"the document is larger than {limit} bytes")
    return bytes(body)


async def fetch_json(
    client: httpx.AsyncClient,
    method: str,
    url: str,
    *,
    max_bytes: int = MAX_BYTES,
    timeout: float = TIMEOUT,
    auth: tuple[str, str] | None = None,
    **request: Any,
) -> Any:
    """The JSON document `method url` answers with 200. `auth`: HTTP Basic credentials;
    `request` goes to httpx's request (data, headers). Raises DocumentUnavailable: no answer in
    `timeout` s, another status, a redirect, a compressed or oversized body, not JSON."""
    with optional_dependency():
        import httpx

    headers = {"accept": "application/json", "accept-encoding": "identity"}
    headers.update(request.pop("headers", None) or {})
    try:
        async with asyncio.timeout(timeout):  # the whole exchange: a slow drip counts too
            built = client.build_request(method, url, headers=headers, **request)
            body = await _exchange(client, built, max_bytes, auth)
    except TimeoutError:
        raise DocumentUnavailable(f"{url} took longer than {timeout:g} s") from None
    except httpx.HTTPError as exc:
        raise DocumentUnavailable(f"{url} could not be reached ({type(exc).__name__})") from None
    try:
        return loads(body)
    except NestedTooDeep as exc:
        raise DocumentUnavailable(f"{url} answered with {exc}") from None
    except ValueError:
        raise DocumentUnavailable(f"{url} did not answer with JSON") from None


async def _exchange(
    client: httpx.AsyncClient,
    built: httpx.Request,
    max_bytes: int,
    auth: tuple[str, str] | None,
) -> bytes:
    url = built.url
    response = await client.send(built, stream=True, follow_redirects=False, auth=auth)
    try:
        if response.status_code != 200:
            raise DocumentUnavailable(f"{url} answered HTTP {response.status_code}")
        if response.headers.get("content-encoding", "identity") != "identity":
            raise DocumentUnavailable(f"{url} sent a compressed document")
        return await read_limited(response, max_bytes)
    finally:
        await response.aclose()
