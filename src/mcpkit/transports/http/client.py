"""Streamable HTTP, client side: each message a POST; answers come back as JSON or SSE.

How this works: `write` queues messages and one sender task POSTs them in order. A request's
POST runs in its own task (many in flight at once) and hands each SSE event to `read` as it
arrives. A notification or response waits for its 202 before the next message leaves, so the
server sees `notifications/initialized` before the requests behind it; `initialize` waits for
its whole answer, which carries the session id (sent on every later request) and the
negotiated revision (sent as `MCP-Protocol-Version`). After the handshake a GET stream carries
server-initiated messages (405: the server offers none). A stream that drops before its
response arrived is resumed with GET + `Last-Event-ID` after the server's `retry` delay
(a server may "poll", closing it again and again); `max_reconnects` failed attempts in a row
end it, and `notifications/cancelled` for the request stops it.

A 400/404/405 answer to the initialize POST switches to the 2024-11-05 HTTP+SSE transport
(`legacy_client.py`) for the rest of the connection.

2026-07-28 ("modern") requests are recognized by the envelope in `params._meta`: each is its
own POST with no session id, carrying `MCP-Protocol-Version` (from the envelope), `Mcp-Method`,
`Mcp-Name` and the `Mcp-Param-*` headers of the tool's `x-mcp-header` annotations (asked of
the `tool_headers` callback: the client knows them from `tools/list`). No GET stream, no
DELETE, no resumption: a stream that ends before its answer fails the request, and cancelling
a request closes its stream (no `notifications/cancelled` is POSTed). A refused modern POST
(4xx) is answered with the JSON-RPC error in its body as sent (code, message and data), or a
generic error when the body holds none: the client's era probe tells a modern server from a
legacy one by that.

Errors end here, as mcpkit's: a request whose POST fails gets a JSON-RPC error answer (so the
caller sees `ProtocolError` and other requests carry on); a server that cannot be reached, or a
404 for our session id (the server ended the session), closes the transport with a reason that
names the URL, which the session raises as `ConnectionClosed`. By default we do not
re-initialize behind the caller's back: the server's state for the old session (subscriptions,
log level, in-flight requests) is gone, and only the layer above knows whether that matters; a
new `Client` starts a new session. `renew_session=True` opts in: the handshake we saw is
replayed without a session id (the revision must come back unchanged) and the message resent.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

import httpx
import orjson

from mcpkit.errors import INTERNAL_ERROR
from mcpkit.protocol import Outgoing
from mcpkit.protocol.http_headers import request_headers
from mcpkit.protocol.sse import SSEParser
from mcpkit.runtime.transport import PullTransport

logger = logging.getLogger("mcpkit.http.client")

ACCEPT_POST = "application/json, text/event-stream"
SESSION_HEADER = "mcp-session-id"
VERSION_HEADER = "mcp-protocol-version"
FALLBACK_STATUSES = (400, 404, 405)
DEFAULT_RETRY_MS = 1000


# The client's answer to "which headers does this tool's x-mcp-header ask for?"
ToolHeaders = Callable[[str], Mapping[str, tuple[str, ...]] | None]


@dataclass(slots=True)
class _Stream:
    """Where an SSE stream got to: enough to resume it."""

    request_id: Any = None  # the request whose answer ends it (None: the GET listener)
    last_event_id: str | None = None
    retry_ms: int | None = None
    answered: bool = False
    events: int = 0  # messages (not priming events) seen on the current connection


class StreamableHTTPTransport(PullTransport):
    """A `MessageTransport` over Streamable HTTP, with fallback to HTTP+SSE (2024-11-05).

    `headers` go on every request; `auth` is an `httpx.Auth` (e.g. the OAuth flow); `timeout`
    bounds connecting and sending (answers may take as long as the request's own deadline);
    `max_reconnects` bounds failed attempts in a row to reopen a stream. `renew_session`: when
    the server answers 404 for our session, start a new one (replaying the handshake) and
    resend, instead of closing with ConnectionClosed.
    """

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        auth: httpx.Auth | None = None,
        timeout: float = 30.0,
        max_reconnects: int = 3,
        fallback: bool = True,
        renew_session: bool = False,
        client: httpx.AsyncClient | None = None,
        tool_headers: ToolHeaders | None = None,
    ) -> None:
        self.url = url
        self._client = client or httpx.AsyncClient(
            headers=dict(headers or {}),
            auth=auth,
            timeout=httpx.Timeout(timeout, read=None, pool=None),  # wait for a free connection
            follow_redirects=True,
        )
        self._max_reconnects = max_reconnects
        self._fallback = fallback
        self._renew = renew_session
        self._renew_lock = asyncio.Lock()
        self._handshake: tuple[bytes, bytes] | None = None  # initialize, notifications/initialized
        self._inbox: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._outbox: asyncio.Queue[Outgoing] = asyncio.Queue()
        self._tasks: set[asyncio.Task[None]] = set()
        self._in_flight: dict[tuple[type, Any], asyncio.Task[None]] = {}  # request -> its POST
        self._sender = self._spawn(self._send_loop())
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        self._initialize_id: Any = None
        self._reason: str | None = None
        self._closing = False
        self._eof = False
        self._legacy: Any = None  # a LegacySSETransport once we fell back
        self._modern: set[tuple[type, Any]] = set()  # in-flight 2026-07-28 requests
        # Tool name -> its {header name: property path} from x-mcp-header, or None.
        self._tool_headers = tool_headers

    # -- MessageTransport --------------------------------------------------------------------

    async def read(self) -> bytes | None:
        if self._eof:
            return None
        data = await self._inbox.get()
        if data is None:
            self._eof = True  # every later read sees EOF too
        return data

    def write(self, messages: list[Outgoing]) -> None:
        if self._closing or self._reason is not None:
            raise ConnectionError(self._reason or "the HTTP transport is closed")
        if self._legacy is not None:
            self._legacy.write(messages)
            return
        for out in messages:
            self._outbox.put_nowait(out)

    async def close(self) -> None:
        """Stop every stream, end the session on the server (DELETE), release connections."""
        if self._closing:
            return
        self._closing = True
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._legacy is not None:
            await self._legacy.close()
        elif self.session_id is not None and self._reason is None:
            with contextlib.suppress(httpx.HTTPError):
                await self._client.delete(self.url, headers=self._headers(), timeout=2.0)
        await self._client.aclose()
        self._inbox.put_nowait(None)

    async def closed_reason(self) -> str:
        if self._legacy is not None:
            return str(await self._legacy.closed_reason())
        return self._reason or "the connection was closed by the client"

    # -- sending -----------------------------------------------------------------------------

    async def _send_loop(self) -> None:
        while True:
            out = await self._outbox.get()
            if self._legacy is not None:
                self._legacy.write([out])
                continue
            data, method, request_id = out.data, out.method, out.id
            if method == "notifications/cancelled" and self._cancels_modern(out.params):
                self._forget(out.params)  # closing its stream is the cancellation
            elif request_id is None:  # a notification or an answer to the server
                await self._post(data, None)
                if method == "notifications/initialized":
                    self._handshake = (self._handshake or (b"", b""))[0], data
                    self._spawn(self._listen())
                elif method == "notifications/cancelled":
                    self._forget(out.params)
            elif method == "initialize":
                self._handshake = data, b""
                self._initialize_id = request_id
                await self._post(data, request_id, initialize=True)
            else:
                key = _key(request_id)
                try:
                    extra = self._modern_headers(out)
                except (ValueError, TypeError) as exc:
                    self._answer_error(request_id, f"cannot send {method}: {exc}")
                    continue
                if extra is not None:
                    self._modern.add(key)
                task = self._spawn(self._post(data, request_id, modern=extra))
                self._in_flight[key] = task
                task.add_done_callback(partial(self._done, key))

    def _done(self, key: tuple[type, Any], task: asyncio.Task[None]) -> None:
        if self._in_flight.get(key) is task:
            del self._in_flight[key]
            self._modern.discard(key)

    def _cancels_modern(self, params: Any) -> bool:
        return isinstance(params, dict) and _key(params.get("requestId")) in self._modern

    def _modern_headers(self, out: Outgoing) -> dict[str, str] | None:
        """The headers of a 2026-07-28 request (None for a handshake-era one)."""
        version, method, params = out.version, out.method, out.params
        if version is None or method is None:
            return None
        headers = {VERSION_HEADER: version}
        paths: Mapping[str, tuple[str, ...]] | None = None
        name = params.get("name") if method == "tools/call" and params is not None else None
        if isinstance(name, str) and self._tool_headers is not None:
            paths = self._tool_headers(name)
        for header, value in request_headers(method, params or {}, paths or {}):
            headers[header.lower()] = value
        return headers

    def _forget(self, params: Any) -> None:
        """A cancelled request's stream is no longer worth holding open or resuming."""
        if isinstance(params, dict) and "requestId" in params:
            task = self._in_flight.pop(_key(params["requestId"]), None)
            if task is not None:
                task.cancel()

    def _headers(self, **extra: str) -> dict[str, str]:
        headers = dict(extra)
        if self.session_id is not None:
            headers[SESSION_HEADER] = self.session_id
        if self.protocol_version is not None:
            headers[VERSION_HEADER] = self.protocol_version
        return headers

    async def _post(
        self,
        data: bytes,
        request_id: Any,
        *,
        initialize: bool = False,
        again: bool = False,
        modern: dict[str, str] | None = None,
    ) -> None:
        """POST one message and pass its answer up; HTTP failures become mcpkit's here."""
        sent_session = self.session_id
        try:
            if modern is not None:
                await self._exchange_modern(data, request_id, modern)
                return
            expired = await self._exchange(data, request_id, initialize=initialize)
        except httpx.ConnectError as exc:
            self._fail(f"could not connect to {self.url}: {_describe(exc)}")
            return
        except (httpx.HTTPError, httpx.InvalidURL, UnicodeError) as exc:
            if request_id is None:
                logger.warning("POST to %s failed: %s", self.url, _describe(exc))
            else:
                self._answer_error(request_id, f"POST to {self.url} failed: {_describe(exc)}")
            return
        except Exception as exc:  # a bug here must not leave the caller waiting forever
            logger.exception("POST to %s failed", self.url)
            if request_id is not None:
                self._answer_error(request_id, f"POST to {self.url} failed: {_describe(exc)}")
            return
        if expired and sent_session is not None:
            if not again and await self._renewed(sent_session):
                await self._post(data, request_id, again=True)
            else:
                self._session_gone(sent_session)

    async def _exchange(self, data: bytes, request_id: Any, *, initialize: bool) -> bool:
        """The HTTP exchange itself; True when the server says our session is gone (404)."""
        headers = self._headers(accept=ACCEPT_POST, **{"content-type": "application/json"})
        async with self._client.stream("POST", self.url, content=data, headers=headers) as answer:
            status = answer.status_code
            if initialize and self._fallback and status in FALLBACK_STATUSES:
                await self._fall_back(data, status)
            elif status == 404 and SESSION_HEADER in headers:
                return True
            elif status >= 400:
                await self._refused(answer, request_id)
            else:
                if initialize:
                    self.session_id = answer.headers.get(SESSION_HEADER) or None
                await self._take_answer(answer, request_id)
        return False

    async def _exchange_modern(self, data: bytes, request_id: Any, extra: dict[str, str]) -> None:
        """A 2026-07-28 request: its own POST, no session; a refusal passes its error up."""
        headers = {"accept": ACCEPT_POST, "content-type": "application/json", **extra}
        async with self._client.stream("POST", self.url, content=data, headers=headers) as answer:
            if answer.status_code >= 400:
                await self._refused_modern(answer, request_id)
            else:
                await self._take_answer(answer, request_id, resumable=False)

    async def _refused_modern(self, response: httpx.Response, request_id: Any) -> None:
        body = await response.aread()
        message = _parse(body)
        error = message.get("error") if isinstance(message, dict) else None
        if isinstance(error, dict) and type(error.get("code")) is int:
            text = error.get("message")
            answer: dict[str, Any] = {
                "code": error["code"],
                "message": text if isinstance(text, str) else f"HTTP {response.status_code}",
            }
            if "data" in error:
                answer["data"] = error["data"]
            self._inbox.put_nowait(
                orjson.dumps({"jsonrpc": "2.0", "id": request_id, "error": answer})
            )
            return
        await self._refused_body(response, body, request_id)

    async def _take_answer(
        self, response: httpx.Response, request_id: Any, *, resumable: bool = True
    ) -> None:
        kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind == "text/event-stream":
            stream = _Stream(request_id)
            await self._read_stream(response, stream)
            if request_id is not None and not stream.answered and not resumable:
                self._answer_error(
                    request_id, f"{self.url} closed the response stream before answering"
                )
            elif request_id is not None and not stream.answered:
                await self._resume(stream)
        elif kind == "application/json":
            body = await response.aread()
            message = _parse(body)
            items = message if isinstance(message, list) else [message]  # batch: 2025-03-26
            answered = False
            for item in items:
                if isinstance(item, dict) and item:
                    answered = self._deliver_json(item, request_id) or answered
            if request_id is not None and not answered:
                self._answer_error(request_id, f"{self.url} answered with JSON but not to us")
        elif request_id is not None:
            self._answer_error(
                request_id,
                f"{self.url} answered with HTTP {response.status_code} and no JSON-RPC answer"
                + (f" (content type {kind!r})" if kind else ""),
            )

    def _deliver_json(self, message: dict[str, Any], request_id: Any) -> bool:
        """Pass one message of a JSON body up; True when it answers `request_id`."""
        if message.get("id") is None and "error" in message and request_id is not None:
            message = {**message, "id": request_id}  # an error about our message, sans id
        self._deliver(orjson.dumps(message), message)
        return request_id is not None and _is_answer(message, request_id)

    async def _refused(self, response: httpx.Response, request_id: Any) -> None:
        await self._refused_body(response, await response.aread(), request_id)

    async def _refused_body(self, response: httpx.Response, body: bytes, request_id: Any) -> None:
        message = _parse(body)
        error = message.get("error") if isinstance(message, dict) else None
        text = f"{self.url} refused the message with HTTP {response.status_code}"
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            text += f": {error['message']}"
        elif body:
            text += f": {body[:200].decode('utf-8', 'replace')}"
        if request_id is None:
            logger.warning("%s", text)
        else:
            code = error.get("code") if isinstance(error, dict) else None
            self._answer_error(request_id, text, code if isinstance(code, int) else None)

    # -- receiving ---------------------------------------------------------------------------

    def _deliver(self, data: bytes, message: Any) -> None:
        if (
            self._initialize_id is not None
            and isinstance(message, dict)
            and message.get("id") == self._initialize_id
            and "method" not in message
        ):
            self._initialize_id = None
            result = message.get("result")
            if isinstance(result, dict) and isinstance(result.get("protocolVersion"), str):
                self.protocol_version = result["protocolVersion"]
        self._inbox.put_nowait(data)

    async def _read_stream(self, response: httpx.Response, stream: _Stream) -> None:
        """Hand each message on `response` to `read`; stops quietly when the connection drops."""
        parser = SSEParser()
        stream.events = 0
        try:
            async for chunk in response.aiter_bytes():
                for event in parser.feed(chunk):
                    if event.id is not None:
                        stream.last_event_id = event.id
                    if event.retry is not None:
                        stream.retry_ms = event.retry
                    if event.event != "message" or not event.data.strip():
                        continue  # priming events, retry hints, other event types
                    data = event.data.encode()
                    message = _parse(data)
                    stream.events += 1
                    if stream.request_id is not None and _is_answer(message, stream.request_id):
                        stream.answered = True
                    self._deliver(data, message)
        except httpx.HTTPError as exc:  # dropped mid-stream: the caller may resume
            logger.debug("SSE stream from %s dropped: %s", self.url, _describe(exc))

    async def _resume(self, stream: _Stream) -> None:
        """GET + Last-Event-ID until the request's answer arrives (or it is cancelled).

        A server may poll, closing the stream again and again while the request runs: each
        connection that opens counts as progress; `max_reconnects` failures in a row end it.
        """
        failures = 0
        while not stream.answered:
            if stream.last_event_id is None:
                self._answer_error(
                    stream.request_id,
                    f"{self.url} closed the response stream before answering, and it cannot be "
                    "resumed (no event id)",
                )
                return
            if failures >= self._max_reconnects:
                self._answer_error(
                    stream.request_id,
                    f"gave up resuming the response stream from {self.url} after "
                    f"{failures} failed attempts",
                )
                return
            await asyncio.sleep((stream.retry_ms or DEFAULT_RETRY_MS) / 1000)
            session = self.session_id
            status = await self._get_stream(stream)
            if status == 404 and session is not None:
                if self._renew:  # the answer went with the old session; the next message renews
                    self._answer_error(
                        stream.request_id,
                        f"{self.url} ended session {session} before answering; the request is lost",
                    )
                else:
                    self._session_gone(session)
                return
            failures = 0 if status == 200 else failures + 1

    async def _get_stream(self, stream: _Stream) -> int:
        """One GET of an SSE stream (resuming it when we have an event id).

        Returns the HTTP status, 0 when the request failed, -1 for a 200 that is no stream.
        """
        extra = {"accept": "text/event-stream"}
        if stream.last_event_id is not None:
            extra["last-event-id"] = stream.last_event_id
        stream.events = 0
        try:
            async with self._client.stream("GET", self.url, headers=self._headers(**extra)) as r:
                kind = r.headers.get("content-type", "").split(";")[0].strip().lower()
                if r.status_code != 200:
                    return r.status_code
                if kind != "text/event-stream":
                    return -1
                await self._read_stream(r, stream)
                return 200
        except httpx.HTTPError as exc:
            logger.debug("GET %s failed: %s", self.url, _describe(exc))
            return 0

    async def _listen(self) -> None:
        """The GET stream for messages the server sends unasked, reopened while it lasts.

        405 (or any 4xx): the server offers none. The server may close it at any time; we come
        back after its `retry` delay, and stop after `max_reconnects` failures in a row.
        """
        stream = _Stream()
        failures = 0
        while failures < self._max_reconnects:
            session = self.session_id
            status = await self._get_stream(stream)
            if status == 404 and session is not None:
                if not await self._renewed(session):  # renewal starts a new listener
                    self._session_gone(session)
                return
            if 400 <= status < 500:
                return
            failures = 0 if status == 200 else failures + 1
            await asyncio.sleep((stream.retry_ms or DEFAULT_RETRY_MS) / 1000)

    # -- failure -----------------------------------------------------------------------------

    def _answer_error(self, request_id: Any, message: str, code: int | None = None) -> None:
        error = {"code": code if code is not None else INTERNAL_ERROR, "message": message}
        self._inbox.put_nowait(orjson.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}))

    async def _renewed(self, expired: str) -> bool:
        """With `renew_session`, start a new session in place of `expired`: replay the
        handshake (without a session id); True once it is done, by us or by a racing task.
        """
        if not self._renew or self._handshake is None or not self._handshake[1]:
            return False
        async with self._renew_lock:
            if self.session_id != expired:
                return self.session_id is not None
            initialize, initialized = self._handshake
            version, self.session_id, self.protocol_version = self.protocol_version, None, None
            try:
                headers = self._headers(accept=ACCEPT_POST, **{"content-type": "application/json"})
                answer = await self._client.post(self.url, content=initialize, headers=headers)
                agreed = _initialize_version(answer)
                session = answer.headers.get(SESSION_HEADER) or None
                if answer.status_code != 200 or agreed != version or session is None:
                    logger.warning("%s: could not renew the session", self.url)
                    return False
                self.session_id, self.protocol_version = session, version
                headers = self._headers(**{"content-type": "application/json"})
                await self._client.post(self.url, content=initialized, headers=headers)
            except httpx.HTTPError as exc:
                logger.warning("%s: could not renew the session: %s", self.url, _describe(exc))
                return False
            logger.info("%s ended session %s; continuing in %s", self.url, expired, session)
            self._spawn(self._listen())
            return True

    def _session_gone(self, session_id: str) -> None:
        self._fail(
            f"{self.url} answered HTTP 404 for session {session_id}: the server ended the "
            "session; connect again to start a new one"
        )

    def _fail(self, reason: str) -> None:
        if self._reason is None and not self._closing:
            self._reason = reason
            self._inbox.put_nowait(None)

    async def _fall_back(self, initialize: bytes, status: int) -> None:
        from mcpkit.transports.http.legacy_client import LegacySSETransport

        logger.info("%s answered the initialize POST with %d: trying HTTP+SSE", self.url, status)
        try:
            legacy = await LegacySSETransport.connect(self.url, self._client, self._inbox)
        except ConnectionError as exc:
            self._fail(
                f"{self.url} refused the initialize POST with HTTP {status} and is not an "
                f"HTTP+SSE server either: {exc}"
            )
            return
        self._legacy = legacy
        legacy.write([Outgoing(initialize)])

    def _spawn(self, work: Any) -> asyncio.Task[None]:
        task: asyncio.Task[None] = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task


def _initialize_version(response: httpx.Response) -> str | None:
    """The protocolVersion in an initialize answer, whether JSON or an event stream."""
    kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind == "text/event-stream":
        bodies = [event.data.encode() for event in SSEParser().feed(response.content + b"\n\n")]
    else:
        bodies = [response.content]
    for body in bodies:
        message = _parse(body) if body.strip() else None
        result = message.get("result") if isinstance(message, dict) else None
        if isinstance(result, dict) and isinstance(result.get("protocolVersion"), str):
            return str(result["protocolVersion"])
    return None


def _is_answer(message: Any, request_id: Any) -> bool:
    return (
        isinstance(message, dict)
        and "method" not in message
        and _key(message.get("id")) == _key(request_id)
    )


def _key(request_id: Any) -> tuple[type, Any]:
    return type(request_id), request_id  # 1 and "1" are different requests


def _parse(data: bytes) -> Any:
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return {}


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
