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
(`http_sse_client.py`) for the rest of the connection; a 503 with a short Retry-After (a
worker shutting down behind a balancer) sends it again after that wait, a few times.
Reading what comes back (JSON bodies, SSE streams and their resumption, refusals, the GET
listener) is `client_streams.py`; each message is parsed once there and handed up parsed.

2026-07-28 (per-request era) requests are recognized by the envelope in `params._meta`: each is its
own POST with no session id, carrying `MCP-Protocol-Version` (from the envelope), `Mcp-Method`,
`Mcp-Name` and the `Mcp-Param-*` headers of the tool's `x-mcp-header` annotations (asked of
the `tool_headers` callback: the client knows them from `tools/list`). No GET stream, no
DELETE, no resumption: a stream that ends before its answer fails the request, and cancelling
a request closes its stream (no `notifications/cancelled` is POSTed). A refused 2026-07-28 POST
(4xx) is answered with the JSON-RPC error in its body as sent (code, message and data), or a
generic error when the body holds none: the client's era probe tells a per-request server
from a handshake-era one by that.

Errors end here, as mcpkit's: a request whose POST fails gets a JSON-RPC error answer (so the
caller sees `ProtocolError` and other requests carry on). A server that is gone closes the
transport with a reason that names the URL, which the session raises as `ConnectionClosed` for
every request still waiting (and later ones), and which `wait_closed()` returns at once: a
connection refused; a connection that broke (reset, closed before the answer, an event stream
cut off) followed by a refused new connection (`refused`: a HEAD with no session id); the GET
stream lost and not reopened; a 404 for our session id (the server ended the session). A
connection that broke while the server still accepts new ones fails only that request.

By default we do not re-initialize behind the caller's back: the server's state for the old
session (subscriptions, log level, in-flight requests) is gone, and only the layer above knows
whether that matters; a new `Client` starts a new session. `renew_session=True` opts in:
the handshake we saw is replayed without a session id (the revision must come back unchanged)
and the message resent.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

import httpx

from mcpkit.errors import INTERNAL_ERROR
from mcpkit.protocol import Outgoing
from mcpkit.protocol.http_headers import request_headers
from mcpkit.protocol.jsonrpc import ErrorResponse, Parsed, Response, parse
from mcpkit.protocol.sse import SSEParser
from mcpkit.runtime.transport import Incoming
from mcpkit.transports.http.client_streams import (
    SEND_FAILED,
    ResponseStreams,
    content_type,
    describe,
    is_answer,
    request_key,
)
from mcpkit.transports.http.inbox import InboxTransport

logger = logging.getLogger("mcpkit.http.client")

ACCEPT_POST = "application/json, text/event-stream"
SESSION_HEADER = "mcp-session-id"
VERSION_HEADER = "mcp-protocol-version"
FALLBACK_STATUSES = (400, 404, 405)
# initialize answered 503 with Retry-After (a worker draining, a shared state briefly away):
# sent again up to CONNECT_RETRIES times, when the wait asked is at most CONNECT_WAIT s.
CONNECT_RETRIES = 3
CONNECT_WAIT = 5
# A POST that failed before any answer: the request gets an error, the transport lives on.
_POST_FAILED: tuple[type[Exception], ...] = (*SEND_FAILED, httpx.InvalidURL, UnicodeError)


# The client's answer to "which headers does this tool's x-mcp-header ask for?"
ToolHeaders = Callable[[str], Mapping[str, tuple[str, ...]] | None]


class StreamableHTTPTransport(InboxTransport):
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
        self._streams = ResponseStreams(self, self._client, max_reconnects, renew_session)
        self._check_timeout = min(timeout, 5.0)  # is the server still there?
        self._fallback = fallback
        self._renew = renew_session
        self._renew_lock = asyncio.Lock()
        self._handshake: tuple[bytes, bytes] | None = None  # initialize, notifications/initialized
        # What `read` hands up: parsed messages (bytes from the HTTP+SSE fallback); None: EOF.
        self._inbox: asyncio.Queue[Incoming | None] = asyncio.Queue()
        self._outbox: asyncio.Queue[Outgoing] = asyncio.Queue()
        self._tasks: set[asyncio.Task[None]] = set()
        self._in_flight: dict[tuple[type, Any], asyncio.Task[None]] = {}  # request -> its POST
        self._sender = self._spawn(self._send_loop())
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        self._initialize_id: Any = None
        self._reason: str | None = None
        self._closing = False
        self._keep_session = False  # close() leaves the session on the server (keep_session)
        self._http_sse: Any = None  # a HTTPSSETransport once we fell back
        self._per_request: set[tuple[type, Any]] = set()  # in-flight 2026-07-28 requests
        # Tool name -> its {header name: property path} from x-mcp-header, or None.
        self._tool_headers = tool_headers

    # -- MessageTransport --------------------------------------------------------------------

    def write(self, messages: list[Outgoing]) -> None:
        if self._closing or self._reason is not None:
            raise ConnectionError(self._reason or "the HTTP transport is closed")
        if self._http_sse is not None:
            self._http_sse.write(messages)
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
        if self._http_sse is not None:
            await self._http_sse.close()
        elif self.session_id is not None and self._reason is None and not self._keep_session:
            with contextlib.suppress(*SEND_FAILED):
                await self._client.delete(self.url, headers=self.headers(), timeout=2.0)
        await self._client.aclose()
        self._inbox.put_nowait(None)

    async def closed_reason(self) -> str:
        if self._http_sse is not None:
            return str(await self._http_sse.closed_reason())
        return self._reason or "the connection was closed by the client"

    def resume_session(self, session_id: str, protocol_version: str) -> None:
        """Go on with a session another client process opened, sending no `initialize`: every
        request carries `session_id` and `protocol_version`. The GET stream is asked for; a
        server that holds it open for the other process refuses (409) and it stays there."""
        self.session_id, self.protocol_version = session_id, protocol_version
        self._spawn(self._streams.listen())

    def keep_session(self) -> None:
        """From now on `close` leaves the session on the server (no DELETE): another process
        goes on with it."""
        self._keep_session = True

    # -- sending -----------------------------------------------------------------------------

    async def _send_loop(self) -> None:
        while True:
            out = await self._outbox.get()
            if self._http_sse is not None:
                self._http_sse.write([out])
                continue
            data, method, request_id = out.data, out.method, out.id
            if method == "notifications/cancelled" and self._cancels_per_request(out.params):
                self._forget(out.params)  # closing its stream is the cancellation
            elif request_id is None:  # a notification or an answer to the server
                await self._post(data, None)
                if method == "notifications/initialized":
                    self._handshake = (self._handshake or (b"", b""))[0], data
                    self._spawn(self._streams.listen())
                elif method == "notifications/cancelled":
                    self._forget(out.params)
            elif method == "initialize":
                self._handshake = data, b""
                self._initialize_id = request_id
                await self._post(data, request_id, initialize=True)
            else:
                key = request_key(request_id)
                try:
                    extra = self._per_request_headers(out)
                except (ValueError, TypeError) as exc:
                    self.answer_error(request_id, f"cannot send {method}: {exc}")
                    continue
                if extra is not None:
                    self._per_request.add(key)
                task = self._spawn(self._post(data, request_id, per_request=extra))
                self._in_flight[key] = task
                task.add_done_callback(partial(self._done, key))

    def _done(self, key: tuple[type, Any], task: asyncio.Task[None]) -> None:
        if self._in_flight.get(key) is task:
            del self._in_flight[key]
            self._per_request.discard(key)

    def _cancels_per_request(self, params: Any) -> bool:
        return (
            isinstance(params, dict) and request_key(params.get("requestId")) in self._per_request
        )

    def _per_request_headers(self, out: Outgoing) -> dict[str, str] | None:
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
            task = self._in_flight.pop(request_key(params["requestId"]), None)
            if task is not None:
                task.cancel()

    def headers(self, **extra: str) -> dict[str, str]:
        """`extra`, with the session id and the negotiated revision once there are some."""
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
        per_request: dict[str, str] | None = None,
    ) -> None:
        """POST one message and pass its answer up; HTTP failures become mcpkit's here."""
        sent_session = self.session_id
        try:
            if per_request is not None:
                await self._exchange_per_request(data, request_id, per_request)
                return
            expired = await self._exchange(data, request_id, initialize=initialize)
        except httpx.ConnectError as exc:
            self._fail(f"could not connect to {self.url}: {describe(exc)}")
            return
        except (httpx.NetworkError, httpx.RemoteProtocolError) as exc:
            await self.broken(request_id, exc)
            return
        except _POST_FAILED as exc:
            if request_id is None:
                logger.warning("POST to %s failed: %s", self.url, describe(exc))
            else:
                self.answer_error(request_id, f"POST to {self.url} failed: {describe(exc)}")
            return
        except Exception as exc:  # a bug here must not leave the caller waiting forever
            logger.exception("POST to %s failed", self.url)
            if request_id is not None:
                self.answer_error(request_id, f"POST to {self.url} failed: {describe(exc)}")
            return
        if expired and sent_session is not None:
            if not again and await self.renewed(sent_session):
                await self._post(data, request_id, again=True)
            else:
                self.session_gone(sent_session)

    async def _exchange(self, data: bytes, request_id: Any, *, initialize: bool) -> bool:
        """The HTTP exchange itself; True when the server says our session is gone (404).
        The initialize POST is sent again when it meets a 503 with a short Retry-After
        (`_retry_after`): a worker shutting down, behind a balancer that has not noticed."""
        headers = self.headers(accept=ACCEPT_POST, **{"content-type": "application/json"})
        retries = CONNECT_RETRIES if initialize else 0
        while True:
            async with self._client.stream(
                "POST", self.url, content=data, headers=headers
            ) as answer:
                wait = _retry_after(answer) if retries else None
                if wait is None:
                    return await self._answered(answer, data, request_id, initialize=initialize)
            retries -= 1
            logger.info("%s answered initialize with 503: again in %.1f s", self.url, wait)
            await asyncio.sleep(wait)

    async def _answered(
        self, answer: httpx.Response, data: bytes, request_id: Any, *, initialize: bool
    ) -> bool:
        """What `_exchange` makes of the server's answer to `data` (see there)."""
        status = answer.status_code
        if initialize and self._fallback and status in FALLBACK_STATUSES:
            await self._fall_back(data, status)
        elif status == 404 and SESSION_HEADER in answer.request.headers:
            return True
        elif status >= 400:
            await self._streams.refused(answer, request_id)
        else:
            if initialize:
                self.session_id = answer.headers.get(SESSION_HEADER) or None
            await self._streams.take_answer(answer, request_id)
        return False

    async def _exchange_per_request(
        self, data: bytes, request_id: Any, extra: dict[str, str]
    ) -> None:
        """A 2026-07-28 request: its own POST, no session; a refusal passes its error up."""
        headers = {"accept": ACCEPT_POST, "content-type": "application/json", **extra}
        async with self._client.stream("POST", self.url, content=data, headers=headers) as answer:
            if answer.status_code >= 400:
                await self._streams.refused_per_request(answer, request_id)
            else:
                await self._streams.take_answer(answer, request_id, resumable=False)

    # -- receiving ---------------------------------------------------------------------------

    def deliver(self, message: Parsed) -> None:
        """Hand a parsed message to `read`; the initialize answer's revision is noted on the
        way (later requests carry it in `MCP-Protocol-Version`)."""
        if self._initialize_id is not None and is_answer(message, self._initialize_id):
            self._initialize_id = None
            result = message.result if type(message) is Response else None
            if isinstance(result, dict) and isinstance(result.get("protocolVersion"), str):
                self.protocol_version = result["protocolVersion"]
        self._inbox.put_nowait(message)

    # -- failure -----------------------------------------------------------------------------

    def answer_error(self, request_id: Any, message: str, code: int | None = None) -> None:
        """Fail `request_id` with a JSON-RPC error (the caller sees ProtocolError)."""
        error = {"code": code if code is not None else INTERNAL_ERROR, "message": message}
        self._inbox.put_nowait(ErrorResponse(request_id, error))

    async def renewed(self, expired: str) -> bool:
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
                headers = self.headers(accept=ACCEPT_POST, **{"content-type": "application/json"})
                answer = await self._client.post(self.url, content=initialize, headers=headers)
                agreed = _initialize_version(answer)
                session = answer.headers.get(SESSION_HEADER) or None
                if answer.status_code != 200 or agreed != version or session is None:
                    logger.warning("%s: could not renew the session", self.url)
                    return False
                self.session_id, self.protocol_version = session, version
                headers = self.headers(**{"content-type": "application/json"})
                await self._client.post(self.url, content=initialized, headers=headers)
            except SEND_FAILED as exc:
                logger.warning("%s: could not renew the session: %s", self.url, describe(exc))
                return False
            logger.info("%s ended session %s; continuing in %s", self.url, expired, session)
            self._spawn(self._streams.listen())
            return True

    async def broken(self, request_id: Any, error: BaseException) -> None:
        """The connection carrying a message or its answer broke (reset, or closed before the
        answer). When the server now refuses a new connection it is gone: the transport
        closes, and every request still waiting raises ConnectionClosed. Otherwise only this
        exchange failed: the request gets a JSON-RPC error (ProtocolError)."""
        what = f"the connection to {self.url} broke: {describe(error)}"
        if await self.refused():
            self.went_away(f"{what}, and it refuses new connections: the server is gone")
        elif request_id is None:
            logger.warning("%s", what)
        else:
            self.answer_error(request_id, what)

    async def refused(self) -> bool:
        """Whether the server refuses a new connection now (a HEAD with no session id, outside
        the auth flow: any HTTP answer at all means something still listens)."""
        try:
            await self._client.head(self.url, auth=httpx.Auth(), timeout=self._check_timeout)
        except httpx.ConnectError:
            return True
        except httpx.HTTPError:
            return False
        return False

    def went_away(self, reason: str) -> None:
        """The server is gone: close the transport with `reason` (ConnectionClosed)."""
        self._fail(reason)

    def session_gone(self, session_id: str) -> None:
        self._fail(
            f"{self.url} answered HTTP 404 for session {session_id}: the server ended the "
            "session; connect again to start a new one"
        )

    def _fail(self, reason: str) -> None:
        if self._reason is None and not self._closing:
            self._reason = reason
            self._inbox.put_nowait(None)

    async def _fall_back(self, initialize: bytes, status: int) -> None:
        from mcpkit.transports.http.http_sse_client import HTTPSSETransport

        logger.info("%s answered the initialize POST with %d: trying HTTP+SSE", self.url, status)
        try:
            sse = await HTTPSSETransport.connect(self.url, self._client, self._inbox)
        except ConnectionError as exc:
            self._fail(
                f"{self.url} refused the initialize POST with HTTP {status} and is not an "
                f"HTTP+SSE server either: {exc}"
            )
            return
        self._http_sse = sse
        sse.write([Outgoing(initialize)])

    def _spawn(self, work: Any) -> asyncio.Task[None]:
        task: asyncio.Task[None] = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task


def _retry_after(answer: httpx.Response) -> float | None:
    """How long to wait before sending again a POST answered 503 with a Retry-After of at
    most `CONNECT_WAIT` seconds (delta-seconds only); None: do not send it again."""
    value = answer.headers.get("retry-after", "").strip()
    if answer.status_code != 503 or not (value.isascii() and value.isdigit()):
        return None
    if int(value) > CONNECT_WAIT:
        return None
    return float(value)


def _initialize_version(response: httpx.Response) -> str | None:
    """The protocolVersion in an initialize answer, whether JSON or an event stream."""
    if content_type(response) == "text/event-stream":
        bodies = [event.data for event in SSEParser().feed(response.content + b"\n\n")]
    else:
        bodies = [response.content.decode("utf-8", "replace")]
    for body in bodies:
        message = parse(body) if body.strip() else None
        result = message.result if type(message) is Response else None
        if isinstance(result, dict) and isinstance(result.get("protocolVersion"), str):
            return str(result["protocolVersion"])
    return None
