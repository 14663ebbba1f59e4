"""Newline-delimited messages, pushed to the session as bytes arrive from a pipe.

The pipe's protocol calls `feed` from the event loop's read callback; each complete line goes
straight to the session (no reader task to wake per message), then `chunk_done` lets the
session send every answer the chunk produced in one write. A line longer than the limit is
dropped as it streams in, so memory stays bounded, whether it arrives in pieces or whole in
one read (a pipe read is up to 64 KiB, so a line under that size comes in one piece); the
session gets instead a parse error that names the limit, which it answers with -32700. At EOF
a last line without its newline is delivered too.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from mcpkit.errors import PARSE_ERROR
from mcpkit.protocol.jsonrpc import Invalid
from mcpkit.runtime.transport import Incoming

logger = logging.getLogger("mcpkit.stdio")


def too_long(limit: int) -> Invalid:
    """What the session gets in place of a line over `limit` bytes: a parse error (owed an
    answer, -32700) whose message names the limit, so the sender learns why."""
    message = f"Parse error: message exceeds the size limit ({limit} bytes)"
    return Invalid(None, PARSE_ERROR, message, reply=True, text="<dropped: over the size limit>")


class LineSplitter:
    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._partial = bytearray()
        self._skipping = False  # inside a line that went over the limit
        self._receive: Callable[[Incoming], None] | None = None
        self._chunk_done: Callable[[], None] = lambda: None
        self._eof: Callable[[], None] | None = None
        self._early: list[bytes] = []  # bytes that arrived before `attach`
        self._ended = False

    def attach(
        self,
        receive: Callable[[Incoming], None],
        chunk_done: Callable[[], None],
        eof: Callable[[], None],
    ) -> None:
        self._receive, self._chunk_done, self._eof = receive, chunk_done, eof
        early, self._early = self._early, []
        for data in early:
            self.feed(data)
        if self._ended:
            self._last_line()
            eof()

    def feed(self, data: bytes) -> None:
        if self._receive is None:
            self._early.append(data)
            return
        end = data.find(b"\n")
        if end < 0:
            self._keep(data)
            return
        start = 0
        if self._partial or self._skipping:
            if self._skipping:
                self._skipping = False
            else:
                self._deliver(bytes(self._partial) + data[:end])
            self._partial.clear()
            start = end + 1
            end = data.find(b"\n", start)
        while end >= 0:
            self._deliver(data[start:end])
            start = end + 1
            end = data.find(b"\n", start)
        if start < len(data):
            self._keep(data[start:])
        self._chunk_done()

    @property
    def ended(self) -> bool:
        return self._ended

    def feed_eof(self) -> None:
        if self._ended:
            return
        self._ended = True
        if self._receive is None:
            return  # `attach` delivers what came, the last line, then EOF
        self._last_line()
        if self._eof is not None:
            self._eof()

    def _last_line(self) -> None:
        # A final message without its newline is still a message (`printf '{...}' | server`).
        if self._partial and not self._skipping:
            line = bytes(self._partial)
            self._partial.clear()
            self._deliver(line)
            self._chunk_done()

    def _deliver(self, line: bytes) -> None:
        if len(line) > self._limit:  # came whole in one read: never buffered, still refused
            self._refuse()
        elif line and not line.isspace():
            assert self._receive is not None
            self._receive(line)

    def _refuse(self) -> None:
        logger.warning("dropped a message longer than %d bytes", self._limit)
        assert self._receive is not None
        self._receive(too_long(self._limit))

    def _keep(self, data: bytes) -> None:
        if self._skipping:
            return
        self._partial += data
        if len(self._partial) > self._limit:
            self._partial.clear()
            self._skipping = True
            self._refuse()
            self._chunk_done()


class LineProtocol(asyncio.Protocol):
    """A read pipe's protocol feeding a `LineSplitter`."""

    def __init__(self, splitter: LineSplitter) -> None:
        self.splitter = splitter

    def data_received(self, data: bytes) -> None:
        self.splitter.feed(data)

    def eof_received(self) -> bool:
        self.splitter.feed_eof()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.splitter.feed_eof()


class ChildProcessProtocol(asyncio.subprocess.SubprocessStreamProtocol):
    """asyncio's subprocess protocol, except that the end of the child's stdout ends the
    `LineSplitter` (its data reaches the splitter through `DirectStdout`).

    stdin and stderr stay ordinary streams, so `asyncio.subprocess.Process` works as usual.
    """

    def __init__(self, splitter: LineSplitter, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=2**16, loop=loop)
        self.splitter = splitter

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd == 1:
            self.splitter.feed_eof()
        super().pipe_connection_lost(fd, exc)


class DirectStdout(asyncio.Protocol):
    """The child's stdout pipe protocol: data straight to the splitter, the rest to asyncio's.

    asyncio's subprocess transport hands each chunk a pipe reads to the subprocess protocol
    through `loop.call_soon`: one more turn of the event loop (an epoll call) per message,
    about a tenth of a sequential stdio call here. Feeding the splitter from the pipe's own
    read callback saves it; the pipe's end still goes through asyncio's protocol, which is
    how the subprocess transport knows its pipes are closed (and `Process.wait()` returns).
    """

    def __init__(self, original: asyncio.BaseProtocol, splitter: LineSplitter) -> None:
        self.original = original
        self.splitter = splitter

    def data_received(self, data: bytes) -> None:
        self.splitter.feed(data)

    def eof_received(self) -> bool | None:
        return self.original.eof_received()  # type: ignore[attr-defined, no-any-return]

    def connection_lost(self, exc: Exception | None) -> None:
        self.original.connection_lost(exc)

    def pause_writing(self) -> None:
        self.original.pause_writing()

    def resume_writing(self) -> None:
        self.original.resume_writing()
