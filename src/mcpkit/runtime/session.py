"""The asyncio driver around a sans-IO `Connection`.

One pump loop per connection reads messages and feeds them to the core; the events that come
out resolve futures (our requests), start handlers (their requests) or go to callbacks. A
handler that returns a plain dict is answered inline with no task; one that returns an
awaitable gets its own task, so the peer can cancel it. Outgoing messages are flushed at the
end of each chunk a push transport delivers, else once per event-loop turn, so pipelined
answers leave in one write (a request of ours made alone leaves at once). One timer tracks the
core's next deadline.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from mcpkit import telemetry
from mcpkit.errors import ConnectionClosed, MCPError, RequestTimeout
from mcpkit.protocol import (
    Connection,
    ErrorReceived,
    Event,
    Initialized,
    InitializeFailed,
    MessageRejected,
    NotificationReceived,
    Prepared,
    ProgressReceived,
    RequestCancelled,
    RequestId,
    RequestReceived,
    RequestTimedOut,
    ResponseReceived,
    Timeout,
)
from mcpkit.protocol.snapshot import HandshakeEnded, SessionChange
from mcpkit.runtime.handling import RequestHandler, failure
from mcpkit.runtime.noise import Noise
from mcpkit.runtime.principal import Principal
from mcpkit.runtime.transport import Incoming, MessageTransport, PullTransport, PushTransport

JSONObject = dict[str, Any]
NotificationHandler = Callable[["Session", NotificationReceived], "Awaitable[None] | None"]
ProgressCallback = Callable[[float, float | None, str | None], "Awaitable[None] | None"]

logger = logging.getLogger("mcpkit.runtime")


class Session:
    """A live MCP connection: the core, a transport, and the tasks between them."""

    traced = True  # our requests are CLIENT spans when OpenTelemetry is set up (telemetry)

    def __init__(
        self,
        connection: Connection,
        transport: MessageTransport,
        *,
        on_request: RequestHandler | None = None,
        on_notification: NotificationHandler | None = None,
        on_initialized: Callable[[Initialized], None] | None = None,
        on_change: Callable[[SessionChange], None] | None = None,
    ) -> None:
        self.connection = connection
        self.transport = transport
        self.state: Any = None  # whatever the server keeps per connection
        self._on_request = on_request
        self._on_notification = on_notification
        self._on_initialized = on_initialized
        self._on_change = on_change
        transport.apply_change = self.apply
        self._loop = asyncio.get_running_loop()
        self._futures: dict[RequestId, asyncio.Future[JSONObject]] = {}
        self._progress: dict[RequestId, ProgressCallback] = {}
        self._handlers: dict[RequestId, asyncio.Task[None]] = {}
        self._background: set[asyncio.Task[Any]] = set()
        self._initialize_future: asyncio.Future[Initialized] | None = None
        self._flush_scheduled = False
        self._cancelled_in_chunk = False
        self._timer: asyncio.TimerHandle | None = None
        self._closed_error: ConnectionClosed | None = None
        self._pump: asyncio.Task[None] | None = None
        self._noise = Noise(transport.peer_name)
        # What each event from the core sets in motion.
        self._reactions: dict[type, Callable[[Any], None]] = {
            RequestReceived: self._dispatch,
            ResponseReceived: self._resolve,
            ErrorReceived: lambda e: self._fail(e.id, e.error),
            RequestCancelled: self._cancel_handler,
            ProgressReceived: self._report_progress,
            NotificationReceived: self._notify,
            RequestTimedOut: self._timed_out,
            Initialized: self._initialized,
            InitializeFailed: self._initialize_failed,
            MessageRejected: self._rejected,
        }

    # -- running ---------------------------------------------------------------------------

    def start(self) -> asyncio.Task[None]:
        """Run the pump in the background (clients); servers usually `await run()`."""
        self._pump = self._loop.create_task(self.run())
        return self._pump

    async def run(self) -> None:
        """Pump messages until the peer goes away, then fail whatever still waits."""
        try:
            transport = self.transport
            if isinstance(transport, PushTransport):
                await self._run_pushed(transport)
            else:
                await self._run_pulled(transport)
        finally:
            # A peer that stopped sending may still be reading: answers already produced go
            # out before the connection counts as closed (input and EOF can arrive together).
            self._flush()
            await self._connection_lost()

    async def _run_pulled(self, transport: PullTransport) -> None:
        connection, loop = self.connection, self._loop
        while True:
            data = await transport.read()
            if data is None:
                return
            self._handle(connection.receive(data, loop.time()))
            if transport.backlogged():
                await transport.drain()

    async def _run_pushed(self, transport: PushTransport) -> None:
        # Messages are handled inside the transport's data callback: no task wake-up per
        # message, and the answers to a chunk leave in one write at its end.
        connection, loop = self.connection, self._loop
        ended: asyncio.Future[None] = loop.create_future()

        react = self._react

        def receive(data: Incoming) -> None:
            # No flush scheduled here: `chunk_done` follows and sends what the chunk produced.
            react(connection.receive(data, loop.time()))

        def chunk_done() -> None:
            if self._cancelled_in_chunk:
                # Let cancelled handlers unwind before later answers (a ping after a
                # cancellation) leave: a flush on the next loop turn runs after them.
                self._cancelled_in_chunk = False
                self._schedule_flush()
            elif connection.has_data_to_send:
                self._flush()

        def eof() -> None:
            if not ended.done():
                ended.set_result(None)

        transport.attach(receive, chunk_done, eof)
        await ended

    @property
    def closed(self) -> bool:
        return self._closed_error is not None

    async def wait_closed(self) -> str:
        """Wait until the pump ends (the peer went away, or `close()`); why it ended."""
        if self._pump is not None:
            await asyncio.shield(self._pump)
        return str(self._closed_error) if self._closed_error is not None else "closed"

    # -- what handlers see (`Peer`) ----------------------------------------------------------

    @property
    def principal(self) -> Principal | None:
        return self.transport.principal

    @property
    def protocol_version(self) -> str | None:
        return self.connection.protocol_version

    @property
    def peer_info(self) -> JSONObject | None:
        return self.connection.peer_info

    @property
    def peer_capabilities(self) -> JSONObject | None:
        return self.connection.peer_capabilities

    def close_stream(self, request_id: RequestId) -> bool:
        return self.transport.close_stream(request_id)

    # -- the session's state as data --------------------------------------------------------

    def changed(self, change: SessionChange, related: RequestId | None = None) -> None:
        """A handler changed this session's state (`related`: the request it serves): the
        transport keeps it (see `Transport.changed`)."""
        self.transport.changed(change, related)

    def apply(self, change: SessionChange) -> None:
        """Make here a change another process serving this session made: the handshake ends
        (as if `initialized` came here), or the server's state takes it (`on_change`). Not a
        message: no handler, middleware or telemetry sees it."""
        if type(change) is HandshakeEnded:
            for event in self.connection.end_handshake():
                if self._on_initialized is not None:
                    self._on_initialized(event)  # type: ignore[arg-type]
            self._schedule_flush()
        elif self._on_change is not None:
            self._on_change(change)

    async def close(self) -> None:
        """Close the transport and wait for the pump to finish."""
        await self.transport.close()
        if self._pump is not None and self._pump is not asyncio.current_task():
            await asyncio.shield(self._pump)

    async def _connection_lost(self) -> None:
        if self._closed_error is not None:
            return
        try:
            reason = await self.transport.closed_reason()
        except Exception:  # the reason is only for messages; never mask the loss itself
            reason = "the connection closed"
        error = ConnectionClosed(reason)
        self._closed_error = error
        self.connection.connection_lost()
        if self._timer is not None:
            self._timer.cancel()
        for future in self._futures.values():
            if not future.done():
                future.set_exception(ConnectionClosed(reason))
        self._futures.clear()
        if self._initialize_future is not None and not self._initialize_future.done():
            self._initialize_future.set_exception(ConnectionClosed(reason))
        for task in list(self._handlers.values()):
            task.cancel()
        if self._handlers:
            await asyncio.gather(*self._handlers.values(), return_exceptions=True)

    # -- events ----------------------------------------------------------------------------

    def _handle(self, events: list[Event]) -> None:
        self._react(events)
        self._schedule_flush()

    def _react(self, events: list[Event]) -> None:
        react = self._reactions
        for event in events:
            react[type(event)](event)

    def _resolve(self, event: ResponseReceived) -> None:
        future = self._futures.pop(event.id, None)
        if future is not None and not future.done():
            future.set_result(event.result)

    def _cancel_handler(self, event: RequestCancelled) -> None:
        # Popped here too: a task cancelled before its first step never runs its `finally`.
        task = self._handlers.pop(event.id, None)
        if task is not None:
            task.cancel()
            self._cancelled_in_chunk = True

    def _initialize_failed(self, event: InitializeFailed) -> None:
        error = event.error
        hint = self._noise.hint()
        if hint is not None and isinstance(error, RequestTimeout):
            error = RequestTimeout(error.method, error.timeout, hint)
        if self._initialize_future is not None and not self._initialize_future.done():
            self._initialize_future.set_exception(error)

    def _timed_out(self, event: RequestTimedOut) -> None:
        self._fail(event.id, RequestTimeout(event.method, event.timeout, self._noise.hint()))

    def _rejected(self, event: MessageRejected) -> None:
        if event.text is None:
            logger.debug("rejected a peer message: %s", event.message)
        else:
            self._noise.seen(event.text)

    def _fail(self, request_id: RequestId, error: MCPError) -> None:
        future = self._futures.pop(request_id, None)
        if future is not None and not future.done():
            future.set_exception(error)

    def _initialized(self, event: Initialized) -> None:
        if self._initialize_future is not None and not self._initialize_future.done():
            self._initialize_future.set_result(event)
        if self._on_initialized is not None:
            self._on_initialized(event)
        if self.connection.role == "server":  # the client's initialized came here
            self.transport.changed(HandshakeEnded(), None)

    def _report_progress(self, event: ProgressReceived) -> None:
        callback = self._progress.get(event.request_id)
        if callback is not None:
            self._run_callback(callback(event.progress, event.total, event.message))

    def _notify(self, event: NotificationReceived) -> None:
        if self._on_notification is not None:
            self._run_callback(self._on_notification(self, event))

    def _run_callback(self, outcome: Awaitable[None] | None) -> None:
        if outcome is not None:
            task = self._loop.create_task(_log_errors(outcome))
            self._background.add(task)
            task.add_done_callback(self._background.discard)

    # -- their requests --------------------------------------------------------------------

    def _dispatch(self, event: RequestReceived) -> None:
        connection = self.connection
        if self._on_request is None:
            connection.send_error(event.id, -32601, f"Method not found: {event.method}")
            return
        try:
            outcome = self._on_request(self, event)
        except Exception as exc:
            self._answer_failure(event, exc)
            return
        kind = type(outcome)
        if kind is dict or kind is Prepared:
            connection.send_result(event.id, outcome)  # type: ignore[arg-type]
        else:
            task = self._loop.create_task(self._answer(event, outcome))  # type: ignore[arg-type]
            self._handlers[event.id] = task

    async def _answer(
        self, event: RequestReceived, pending: Awaitable[JSONObject | Prepared]
    ) -> None:
        connection = self.connection
        try:
            result = await pending
        except asyncio.CancelledError:
            return  # cancelled by the peer (no answer is owed) or by shutdown
        except Exception as exc:
            self._answer_failure(event, exc)
        else:
            connection.send_result(event.id, result)
        finally:
            if self._handlers.get(event.id) is asyncio.current_task():
                del self._handlers[event.id]  # a reused id may already name a newer handler
            if not self.closed:
                self._schedule_flush()

    def _answer_failure(self, event: RequestReceived, exc: Exception) -> None:
        """Answer a request whose handler raised `exc` (at once or later, the same way)."""
        self.connection.send_error(event.id, *failure(event.method, exc))

    # -- our requests ----------------------------------------------------------------------

    async def request(
        self,
        method: str,
        params: JSONObject | None = None,
        *,
        timeout: Timeout | None = None,
        on_progress: ProgressCallback | None = None,
        related_id: RequestId | None = None,
        sent: Callable[[RequestId], None] | None = None,
    ) -> JSONObject:
        """Send a request and wait for its result. `sent(request_id)` is called once it is
        queued (mcpkit.telemetry names its span's request id so, and sends untraced).

        Raises ProtocolError (error answer), RequestTimeout, ConnectionClosed,
        CapabilityNotDeclared / LocalProtocolViolation (refused locally, nothing sent).
        Cancelling the awaiting task sends notifications/cancelled.
        """
        if self.traced and sent is None:
            otel = telemetry.current()
            if otel is not None:  # a CLIENT span around this very call, with `sent` given
                return await otel.request(
                    self, method, params, self.request,
                    timeout=timeout, on_progress=on_progress, related_id=related_id,
                )  # fmt: skip
        if self._closed_error is not None:
            raise ConnectionClosed(str(self._closed_error))
        connection = self.connection
        request_id = connection.send_request(
            method,
            params,
            now=self._loop.time(),
            timeout=timeout,
            progress=on_progress is not None,
            related_id=related_id,
        )
        if sent is not None:
            sent(request_id)
        future: asyncio.Future[JSONObject] = self._loop.create_future()
        alone = not self._futures and not self._flush_scheduled
        self._futures[request_id] = future
        if on_progress is not None:
            self._progress[request_id] = on_progress
        if alone:
            self._flush()  # a lone request leaves now; concurrent ones coalesce in one write
        else:
            self._schedule_flush()
        if timeout is not None:
            self._arm_timer()
        try:
            return await future
        except asyncio.CancelledError:
            if not self.closed and connection.cancel(request_id, "cancelled by the caller"):
                self._schedule_flush()
            raise
        finally:
            self._futures.pop(request_id, None)
            self._progress.pop(request_id, None)

    def notify(
        self, method: str, params: JSONObject | None = None, *, related_id: RequestId | None = None
    ) -> None:
        """Send a notification. Raises like `request`, before anything is sent."""
        if self._closed_error is not None:
            raise ConnectionClosed(str(self._closed_error))
        self.connection.send_notification(method, params, related_id=related_id)
        self._schedule_flush()

    def report_progress(
        self, request_id: RequestId, progress: float, total: float | None, message: str | None
    ) -> bool:
        """Progress on a request the peer sent us; False when nobody is listening."""
        sent = self.connection.send_progress(request_id, progress, total, message)
        if sent:
            self._schedule_flush()
        return sent

    async def initialize(
        self, timeout: Timeout | None = None, version: str | None = None
    ) -> Initialized:
        """Client role: run the handshake. Raises the InitializeFailed error, ConnectionClosed."""
        self._initialize_future = self._loop.create_future()
        self.connection.start_initialize(now=self._loop.time(), timeout=timeout, version=version)
        self._schedule_flush()
        if timeout is not None:
            self._arm_timer()
        return await self._initialize_future

    # -- output and time -------------------------------------------------------------------

    def _schedule_flush(self) -> None:
        # Once per loop turn, and only when there is something to send: an idle turn costs
        # an event-loop iteration on every call.
        if not self._flush_scheduled and self.connection.has_data_to_send:
            self._flush_scheduled = True
            self._loop.call_soon(self._flush)

    def _flush(self) -> None:
        self._flush_scheduled = False
        out = self.connection.data_to_send()
        if out and self._closed_error is None:
            try:
                self.transport.write(out)
            except (ConnectionError, RuntimeError) as exc:
                logger.debug("could not write to the transport: %s", exc)

    def _arm_timer(self) -> None:
        at = self.connection.next_deadline()
        timer = self._timer
        if at is None:
            if timer is not None:
                timer.cancel()
                self._timer = None
            return
        if timer is None or timer.when() > at:
            if timer is not None:
                timer.cancel()
            self._timer = self._loop.call_at(at, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        self._handle(self.connection.expire(self._loop.time()))
        self._arm_timer()


async def _log_errors(outcome: Awaitable[None]) -> None:
    try:
        await outcome
    except Exception:
        logger.exception("notification callback failed")
