"""HTTP+SSE (protocol revision 2024-11-05), client side.

How this works: a GET to the server's SSE URL opens the one stream every server message comes
on; its first event, `endpoint`, names the URL to POST our messages to (resolved against the
SSE URL, and it must stay on the same origin). Messages are POSTed one at a time, in order;
the answers arrive on the stream as `message` events. The stream ending ends the connection.
Streamable HTTP's client falls back to this when the initialize POST is refused with
400/404/405; `HTTPSSETransport.open(url)` uses it directly.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpx
import orjson

from mcpkit.errors import INTERNAL_ERROR
from mcpkit.protocol import Outgoing
from mcpkit.protocol.jsonrpc import parse
from mcpkit.protocol.sse import SSEParser
from mcpkit.runtime.transport import Incoming
from mcpkit.transports.http.client_streams import SEND_FAILED, Unreadable
from mcpkit.transports.http.inbox import InboxTransport

logger = logging.getLogger("mcpkit.http.sse_client")
_NO_ENDPOINT: tuple[type[BaseException], ...] = (StopAsyncIteration, TimeoutError, *SEND_FAILED)


class HTTPSSETransport(InboxTransport):
    """A `MessageTransport` over the 2024-11-05 HTTP+SSE transport."""

    def __init__(
        self,
        url: str,
        client: httpx.AsyncClient,
        inbox: asyncio.Queue[Incoming | None],
        *,
        response: httpx.Response,
        events: Any,
        endpoint: str,
        owns_client: bool,
    ) -> None:
        self.url = url
        self.endpoint = endpoint
        self._client = client
        self._inbox = inbox
        self._response = response
        self._owns_client = owns_client
        self._outbox: asyncio.Queue[bytes] = asyncio.Queue()
        self._reason: str | None = None
        self._closing = False
        loop = asyncio.get_running_loop()
        self._reader = loop.create_task(self._read_loop(events))
        self._sender = loop.create_task(self._send_loop())

    @classmethod
    async def open(
        cls,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        auth: httpx.Auth | None = None,
        timeout: float = 30.0,
    ) -> HTTPSSETransport:
        """Connect to an HTTP+SSE server. Raises ConnectionError when it is not one."""
        client = httpx.AsyncClient(
            headers=dict(headers or {}), auth=auth, timeout=httpx.Timeout(timeout, read=None)
        )
        try:
            return await cls.connect(url, client, asyncio.Queue(), owns_client=True)
        except BaseException:
            await client.aclose()
            raise

    @classmethod
    async def connect(
        cls,
        url: str,
        client: httpx.AsyncClient,
        inbox: asyncio.Queue[Incoming | None],
        *,
        owns_client: bool = False,
        timeout: float = 10.0,
    ) -> HTTPSSETransport:
        """GET `url` and wait for its `endpoint` event. Raises ConnectionError."""
        request = client.build_request("GET", url, headers={"accept": "text/event-stream"})
        try:
            response = await client.send(request, stream=True)
        except SEND_FAILED as exc:
            raise ConnectionError(f"GET {url} failed: {exc}") from exc
        try:
            kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
            if response.status_code != 200 or kind != "text/event-stream":
                raise ConnectionError(
                    f"GET {url} answered HTTP {response.status_code} ({kind or 'no content type'})"
                    ", not an event stream"
                )
            events = _events(response)
            try:
                async with asyncio.timeout(timeout):
                    first = await anext(events)
            except _NO_ENDPOINT as exc:
                raise ConnectionError(f"{url} sent no endpoint event") from exc
            if first.event != "endpoint":
                raise ConnectionError(f"{url} sent {first.event!r} where the endpoint event goes")
            endpoint = urljoin(url, first.data.strip())
            if _origin(endpoint) != _origin(url):
                raise ConnectionError(f"{url} named an endpoint on another origin: {endpoint}")
        except BaseException:
            await response.aclose()
            raise
        return cls(
            url,
            client,
            inbox,
            response=response,
            events=events,
            endpoint=endpoint,
            owns_client=owns_client,
        )

    # -- MessageTransport --------------------------------------------------------------------

    def write(self, messages: list[Outgoing]) -> None:
        if self._closing or self._reason is not None:
            raise ConnectionError(self._reason or "the HTTP+SSE transport is closed")
        for out in messages:
            self._outbox.put_nowait(out.data)

    async def close(self) -> None:
        if self._closing:
            return
        self._closing = True
        for task in (self._reader, self._sender):
            task.cancel()
        await asyncio.gather(self._reader, self._sender, return_exceptions=True)
        with contextlib.suppress(*SEND_FAILED):
            await self._response.aclose()
        if self._owns_client:
            await self._client.aclose()
        self._inbox.put_nowait(None)

    async def closed_reason(self) -> str:
        return self._reason or "the connection was closed by the client"

    # -- the two loops -----------------------------------------------------------------------

    async def _read_loop(self, events: Any) -> None:
        unreadable = Unreadable(self.url)  # not JSON: logged here, with no stdout hint
        try:
            async for event in events:
                if event.event == "message" and event.data.strip():
                    message = parse(event.data)
                    if not unreadable.seen(message):
                        self._inbox.put_nowait(message)
            self._fail(f"{self.url} ended the event stream")
        except SEND_FAILED as exc:
            self._fail(f"the event stream from {self.url} broke: {exc}")

    async def _send_loop(self) -> None:
        headers = {"content-type": "application/json"}
        while True:
            data = await self._outbox.get()
            try:
                response = await self._client.post(self.endpoint, content=data, headers=headers)
            except SEND_FAILED as exc:
                self._fail(f"POST to {self.endpoint} failed: {exc}")
                return
            if response.status_code == 404:
                self._fail(f"{self.endpoint} answered HTTP 404: the server ended the session")
                return
            if response.status_code >= 400:
                self._refused(data, response)

    def _refused(self, data: bytes, response: httpx.Response) -> None:
        text = f"{self.endpoint} refused the message with HTTP {response.status_code}"
        if response.content:
            text += ": " + response.text[:200]
        try:
            message = orjson.loads(data)
        except orjson.JSONDecodeError:
            message = None
        if isinstance(message, dict) and "method" in message and "id" in message:
            error = {"code": INTERNAL_ERROR, "message": text}
            answer = {"jsonrpc": "2.0", "id": message["id"], "error": error}
            self._inbox.put_nowait(orjson.dumps(answer))
        else:
            logger.warning("%s", text)

    def _fail(self, reason: str) -> None:
        if self._reason is None and not self._closing:
            self._reason = reason
            self._inbox.put_nowait(None)


async def _events(response: httpx.Response) -> Any:
    parser = SSEParser()
    async for chunk in response.aiter_bytes():
        for event in parser.feed(chunk):
            yield event


def _origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.scheme, parts.netloc
