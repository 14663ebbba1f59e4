"""The reading half of the Streamable HTTP client: answers to POSTs (a JSON body, or an SSE
stream resumed with `Last-Event-ID` when it drops before the answer), refusals, and the GET
stream for messages the server sends unasked.

Each message is parsed once, here, with the core's parser (`jsonrpc.parse`), and handed up
parsed: the session's connection takes it as it is. `ResponseStreams` sees its transport
through `StreamOwner`, the few things it needs (headers, delivery, errors, session renewal).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any, Protocol

import httpx
import orjson

from mcpkit.errors import MCPError
from mcpkit.protocol.jsonrpc import ErrorResponse, Invalid, Parsed, Response, parse
from mcpkit.protocol.sse import SSEParser

logger = logging.getLogger("mcpkit.http")

DEFAULT_RETRY_MS = 1000
REFUSED = -2  # what `get` returns when the server refuses the connection: it is gone


class StreamOwner(Protocol):
    """What ResponseStreams needs of its transport."""

    url: str
    session_id: str | None

    def headers(self, **extra: str) -> dict[str, str]: ...

    def deliver(self, message: Parsed) -> None: ...

    def answer_error(self, request_id: Any, message: str, code: int | None = None) -> None: ...

    async def renewed(self, expired: str) -> bool: ...

    def session_gone(self, session_id: str) -> None: ...

    async def broken(self, request_id: Any, error: BaseException) -> None: ...

    async def refused(self) -> bool: ...

    def went_away(self, reason: str) -> None: ...


@dataclass(slots=True)
class Stream:
    """Where an SSE stream got to: enough to resume it."""

    request_id: Any = None  # the request whose answer ends it (None: the GET listener)
    last_event_id: str | None = None
    retry_ms: int | None = None
    answered: bool = False
    events: int = 0  # messages (not priming events) seen on the current connection
    broke: BaseException | None = None  # why the last connection dropped mid-stream


class ResponseStreams:
    """Reads what the server sends back (see the module docstring). `max_reconnects` bounds
    failed attempts in a row to reopen a stream; with `renew`, a 404 while resuming loses only
    that answer (the next message starts a new session)."""

    def __init__(
        self, owner: StreamOwner, client: httpx.AsyncClient, max_reconnects: int, renew: bool
    ) -> None:
        self._owner = owner
        self._client = client
        self._max_reconnects = max_reconnects
        self._renew = renew
        self.unreadable = Unreadable(owner.url)

    # -- answers to POSTs -------------------------------------------------------------------

    async def take_answer(
        self, response: httpx.Response, request_id: Any, *, resumable: bool = True
    ) -> None:
        owner = self._owner
        kind = content_type(response)
        if kind == "text/event-stream":
            stream = Stream(request_id)
            await self.read(response, stream)
            if request_id is not None and not stream.answered and not resumable:
                if stream.broke is not None:  # dropped, not ended: is the server still there?
                    await owner.broken(request_id, stream.broke)
                    return
                owner.answer_error(
                    request_id, f"{owner.url} closed the response stream before answering"
                )
            elif request_id is not None and not stream.answered:
                await self.resume(stream)
        elif kind == "application/json":
            parsed = parse(await response.aread())
            items = parsed if type(parsed) is list else [parsed]  # a batch: 2025-03-26
            answered = False
            for item in items:
                answered = self._deliver_json(item, request_id) or answered
            if request_id is not None and not answered:
                owner.answer_error(request_id, f"{owner.url} answered with JSON but not to us")
        elif request_id is not None:
            owner.answer_error(
                request_id,
                f"{owner.url} answered with HTTP {response.status_code} and no JSON-RPC answer"
                + (f" (content type {kind!r})" if kind else ""),
            )

    def _deliver_json(self, message: Any, request_id: Any) -> bool:
        """Pass one message of a JSON body up; True when it answers `request_id`."""
        if self.unreadable.seen(message):
            return False
        if type(message) is ErrorResponse and message.id is None and request_id is not None:
            message = ErrorResponse(request_id, message.error)  # about our message, sans id
        self._owner.deliver(message)
        return request_id is not None and is_answer(message, request_id)

    async def refused(self, response: httpx.Response, request_id: Any) -> None:
        """A 4xx/5xx answer: its JSON-RPC error (or its status) becomes the request's error."""
        await self._refused_body(response, await response.aread(), request_id)

    async def refused_per_request(self, response: httpx.Response, request_id: Any) -> None:
        """A refused 2026-07-28 POST: the JSON-RPC error in its body is passed up as sent
        (code, message, data), so the era probe can read it; else as `refused`."""
        body = await response.aread()
        message = _json(body)
        error = message.get("error") if isinstance(message, dict) else None
        if isinstance(error, dict) and type(error.get("code")) is int:
            text = error.get("message")
            answer: dict[str, Any] = {
                "code": error["code"],
                "message": text if isinstance(text, str) else f"HTTP {response.status_code}",
            }
            if "data" in error:
                answer["data"] = error["data"]
            self._owner.deliver(ErrorResponse(request_id, answer))
            return
        await self._refused_body(response, body, request_id)

    async def _refused_body(self, response: httpx.Response, body: bytes, request_id: Any) -> None:
        message = _json(body)
        error = message.get("error") if isinstance(message, dict) else None
        text = f"{self._owner.url} refused the message with HTTP {response.status_code}"
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            text += f": {error['message']}"
        elif body:
            text += f": {body[:200].decode('utf-8', 'replace')}"
        if request_id is None:
            logger.warning("%s", text)
        else:
            code = error.get("code") if isinstance(error, dict) else None
            self._owner.answer_error(request_id, text, code if isinstance(code, int) else None)

    # -- SSE streams -------------------------------------------------------------------------

    async def read(self, response: httpx.Response, stream: Stream) -> None:
        """Hand each message on `response` up; stops quietly when the connection drops."""
        parser = SSEParser()
        stream.events = 0
        stream.broke = None
        try:
            async for chunk in response.aiter_bytes():
                for event in parser.feed(chunk):
                    if event.id is not None:
                        stream.last_event_id = event.id
                    if event.retry is not None:
                        stream.retry_ms = event.retry
                    if event.event != "message" or not event.data.strip():
                        continue  # priming events, retry hints, other event types
                    message = parse(event.data)
                    if self.unreadable.seen(message):
                        continue
                    stream.events += 1
                    if stream.request_id is not None and is_answer(message, stream.request_id):
                        stream.answered = True
                    self._owner.deliver(message)
        except httpx.HTTPError as exc:  # dropped mid-stream: the caller may resume
            logger.debug("SSE stream from %s dropped: %s", self._owner.url, describe(exc))
            stream.broke = exc

    async def resume(self, stream: Stream) -> None:
        """GET + Last-Event-ID until the request's answer arrives (or it is cancelled).

        A server may poll, closing the stream again and again while the request runs: each
        connection that opens counts as progress; `max_reconnects` failures in a row end it.
        """
        owner = self._owner
        failures = 0
        while not stream.answered:
            if stream.last_event_id is None:
                owner.answer_error(
                    stream.request_id,
                    f"{owner.url} closed the response stream before answering, and it cannot "
                    "be resumed (no event id)",
                )
                return
            if failures >= self._max_reconnects:
                owner.answer_error(
                    stream.request_id,
                    f"gave up resuming the response stream from {owner.url} after "
                    f"{failures} failed attempts",
                )
                return
            await asyncio.sleep((stream.retry_ms or DEFAULT_RETRY_MS) / 1000)
            session = owner.session_id
            status = await self.get(stream)
            if status == REFUSED:
                owner.went_away(self._refused_reason("a response stream dropped"))
                return
            if status == 404 and session is not None:
                if self._renew:  # the answer went with the old session; the next message renews
                    owner.answer_error(
                        stream.request_id,
                        f"{owner.url} ended session {session} before answering; the request "
                        "is lost",
                    )
                else:
                    owner.session_gone(session)
                return
            failures = 0 if status == 200 else failures + 1

    async def get(self, stream: Stream) -> int:
        """One GET of an SSE stream (resuming it when we have an event id).

        Returns the HTTP status, 0 when the request failed, -1 for a 200 that is no stream,
        REFUSED when the server refused the connection.
        """
        owner = self._owner
        extra = {"accept": "text/event-stream"}
        if stream.last_event_id is not None:
            extra["last-event-id"] = stream.last_event_id
        stream.events = 0
        try:
            async with self._client.stream("GET", owner.url, headers=owner.headers(**extra)) as r:
                if r.status_code != 200:
                    return r.status_code
                if content_type(r) != "text/event-stream":
                    return -1
                await self.read(r, stream)
                return 200
        except httpx.ConnectError as exc:
            logger.debug("GET %s refused: %s", owner.url, describe(exc))
            return REFUSED
        except SEND_FAILED as exc:
            logger.debug("GET %s failed: %s", owner.url, describe(exc))
            return 0

    async def listen(self) -> None:
        """The GET stream for messages the server sends unasked, reopened while it lasts.

        405 (or any 4xx): the server offers none. The server may close it at any time; we come
        back after its `retry` delay, and stop after `max_reconnects` failures in a row. The
        server is gone (the transport closes) when the stream drops and a new connection is
        refused, or when it cannot be reopened for `max_reconnects` network failures in a row.
        """
        owner = self._owner
        stream = Stream()
        failures = network = 0
        while failures < self._max_reconnects:
            session = owner.session_id
            status = await self.get(stream)
            if status == 404 and session is not None:
                if not await owner.renewed(session):  # renewal starts a new listener
                    owner.session_gone(session)
                return
            if 400 <= status < 500:
                return
            if status == REFUSED or (stream.broke is not None and await owner.refused()):
                owner.went_away(self._refused_reason("the GET stream ended"))
                return
            failures = 0 if status == 200 else failures + 1
            network = network + 1 if status == 0 else 0
            await asyncio.sleep((stream.retry_ms or DEFAULT_RETRY_MS) / 1000)
        if network >= self._max_reconnects:
            owner.went_away(
                f"the GET stream from {owner.url} ended and could not be reopened "
                f"({network} attempts failed): the server is gone"
            )

    def _refused_reason(self, what: str) -> str:
        return f"{what} and {self._owner.url} refuses new connections: the server is gone"


class Unreadable:
    """Bodies and events from the server that are not JSON at all (the core's parse error).

    They stop here: passed up, the session would answer them with -32700 and log them as a
    stdio server's stray print (its hint that "stdout is for MCP messages only" is stdio's
    alone). An empty one is no message at all, and is not logged: the 202 that accepts a
    notification may say `application/json` with no body (the official SDK's does). Others
    are logged at WARNING naming the server: the first three, then every hundredth.
    """

    def __init__(self, url: str) -> None:
        self.url = url
        self.count = 0

    def seen(self, message: Any) -> bool:
        """Whether `message` is such a text (then it was logged as it should be)."""
        if type(message) is not Invalid or message.text is None:
            return False
        if message.text.strip():
            self.count += 1
            if self.count <= 3 or self.count % 100 == 0:
                logger.warning(
                    "%s sent a body or event that is not JSON-RPC (%d so far): %r",
                    self.url,
                    self.count,
                    message.text,
                )
        return True


def is_answer(message: Any, request_id: Any) -> bool:
    """Whether a parsed message answers `request_id` (1 and "1" are different requests)."""
    kind = type(message)
    return (kind is Response or kind is ErrorResponse) and request_key(message.id) == request_key(
        request_id
    )


def request_key(request_id: Any) -> tuple[type, Any]:
    return type(request_id), request_id


def content_type(response: httpx.Response) -> str:
    value: str = response.headers.get("content-type", "")
    return value.split(";", maxsplit=1)[0].strip().lower()


# What sending a request can raise, mapped here to a failed request (or a closed connection):
# httpx's errors, and ours raised inside the auth flow (the OAuth client's `OAuthError`).
SEND_FAILED: tuple[type[Exception], ...] = (httpx.HTTPError, MCPError)


def describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _json(body: bytes) -> Any:
    """A refusal's body, as JSON when it is (for its error); {} otherwise."""
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        return {}
