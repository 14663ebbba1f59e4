"""stdio transport: newline-delimited JSON-RPC over a pair of pipes.

Server side: reads stdin through the event loop (no thread hop per line; only a stdin the
loop cannot watch, a regular file or /dev/null, is read from a thread in 64 KiB chunks) and
owns stdout — anything else the process prints (print(), C extensions writing to fd 1) is
sent to stderr so it cannot corrupt the protocol. Client side: spawns the server, captures
its stderr, and shuts it down as the spec says (close stdin, wait, SIGTERM, wait, SIGKILL),
signalling its process group (what it started goes too). On Linux a spawned server also gets
SIGTERM when the process that spawned it dies, even by SIGKILL (`PR_SET_PDEATHSIG`): no
server is left behind by a killed host or proxy. Elsewhere, and for what the server itself
starts, only the end of its stdin tells it.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import ctypes
import logging
import os
import shlex
import signal
import stat
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from typing import BinaryIO

from mcpkit.errors import ConnectionClosed
from mcpkit.protocol import Outgoing
from mcpkit.runtime.transport import Incoming, PushTransport
from mcpkit.transports.lines import (
    ChildProcessProtocol,
    DirectStdout,
    LineProtocol,
    LineSplitter,
)

logger = logging.getLogger("mcpkit.stdio")

DEFAULT_MAX_MESSAGE_SIZE = 64 * 1024 * 1024  # bytes; a longer line is refused, not buffered
_BACKLOG_LIMIT = 1024 * 1024


class PipeTransport(PushTransport):
    """Whole messages over pipes: lines pushed in by a `LineSplitter`, written out with a
    StreamWriter. Reading pauses while written data piles up (the peer is not reading)."""

    def __init__(
        self,
        splitter: LineSplitter,
        writer: asyncio.StreamWriter,
        reading: asyncio.ReadTransport | None = None,
    ) -> None:
        self._splitter = splitter
        self._writer = writer
        self._reading = reading
        self._paused = False
        self._closed = False

    def attach(
        self,
        receive: Callable[[Incoming], None],
        chunk_done: Callable[[], None],
        eof: Callable[[], None],
    ) -> None:
        self._splitter.attach(receive, chunk_done, eof)

    def write(self, messages: list[Outgoing]) -> None:
        if len(messages) == 1:
            self._writer.write(messages[0].data + b"\n")
        else:
            self._writer.write(b"\n".join([out.data for out in messages]) + b"\n")
        if self._reading is not None and not self._paused and self.backlogged():
            self._paused = True
            self._reading.pause_reading()
            asyncio.get_running_loop().create_task(self._resume_when_drained())

    async def _resume_when_drained(self) -> None:
        await self.drain()
        self._paused = False
        if self._reading is not None and not self._reading.is_closing():
            self._reading.resume_reading()

    def backlogged(self) -> bool:
        return self._writer.transport.get_write_buffer_size() > _BACKLOG_LIMIT

    async def drain(self) -> None:
        with contextlib.suppress(ConnectionError):
            await self._writer.drain()

    async def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._writer.close()

    async def closed_reason(self) -> str:
        return "the peer closed the stream"


# -- server side -------------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def stdio_server_transport(
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
) -> AsyncIterator[PipeTransport]:
    """This process's stdin/stdout as a transport; stdout is reserved for MCP messages."""
    loop = asyncio.get_running_loop()
    sys.stdout.flush()
    protocol_fd = os.dup(1)
    restore_fd = os.dup(1)
    os.dup2(2, 1)  # fd 1 now reaches stderr: stray output cannot corrupt the protocol
    saved_stdout = sys.stdout
    sys.stdout = sys.stderr
    out_pipe = os.fdopen(protocol_fd, "wb", buffering=0)
    stdin_fd = sys.stdin.fileno()
    was_blocking = os.get_blocking(stdin_fd)
    try:
        splitter = LineSplitter(max_message_size)
        read_pipe = os.fdopen(os.dup(stdin_fd), "rb", buffering=0)
        reading: asyncio.ReadTransport | None = None
        if _pollable(stdin_fd):
            reading, _ = await loop.connect_read_pipe(lambda: LineProtocol(splitter), read_pipe)
        else:  # a regular file or /dev/null, which epoll refuses: read it from a thread
            _feed_from_thread(loop, splitter, read_pipe)
        try:
            write_transport, write_protocol = await loop.connect_write_pipe(
                asyncio.streams.FlowControlMixin, out_pipe
            )
            writer = asyncio.StreamWriter(write_transport, write_protocol, None, loop)
        except ValueError:  # a regular file (`server > answers.jsonl`): writes never block
            writer = _FileWriter(out_pipe)  # type: ignore[assignment]
        transport = PipeTransport(splitter, writer, reading)
        try:
            yield transport
        finally:
            await transport.drain()
            await transport.close()
    finally:
        sys.stdout = saved_stdout
        os.dup2(restore_fd, 1)
        os.close(restore_fd)
        os.set_blocking(stdin_fd, was_blocking)


class _FileWriter:
    """Stands in for a StreamWriter when stdout is a regular file, which asyncio cannot watch."""

    def __init__(self, file: BinaryIO) -> None:
        self._file = file
        self.transport = self

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[self._file.write(view) or 0 :]

    def get_write_buffer_size(self) -> int:
        return 0

    async def drain(self) -> None:
        return None

    def close(self) -> None:
        self._file.close()


def _pollable(fd: int) -> bool:
    """Pipes, sockets and terminals can be watched by the event loop; files and /dev/null not."""
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd)


def _feed_from_thread(
    loop: asyncio.AbstractEventLoop, splitter: LineSplitter, source: BinaryIO
) -> None:
    def pump() -> None:
        while chunk := source.read(65536):
            loop.call_soon_threadsafe(splitter.feed, chunk)
        loop.call_soon_threadsafe(splitter.feed_eof)

    loop.run_in_executor(None, pump)


# -- client side -------------------------------------------------------------------------------


class SubprocessTransport(PipeTransport):
    """A server spawned as a child process, spoken to over its stdin/stdout."""

    def __init__(
        self,
        process: asyncio.subprocess.Process,
        splitter: LineSplitter,
        stdout: asyncio.ReadTransport | None,
        *,
        stderr_callback: Callable[[str], None] | None,
        shutdown_timeout: float,
    ) -> None:
        assert process.stdin is not None
        super().__init__(splitter, process.stdin, stdout)
        self.process = process
        self._shutdown_timeout = shutdown_timeout
        self._stderr_tail: collections.deque[str] = collections.deque(maxlen=40)
        self._stderr_callback = stderr_callback
        self._stderr_task = asyncio.get_running_loop().create_task(self._collect_stderr())

    @classmethod
    async def spawn(
        cls,
        argv: Sequence[str],
        *,
        env: dict[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        stderr_callback: Callable[[str], None] | None = None,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        shutdown_timeout: float = 2.0,
    ) -> SubprocessTransport:
        """Start `argv`. `env` is added to this process's environment (None: inherit it).

        Raises ValueError for an empty command, ConnectionClosed naming the command when it
        cannot be started (not found, not executable, a missing `cwd`)."""
        if not argv:
            raise ValueError("the server command is empty")
        loop = asyncio.get_running_loop()
        splitter = LineSplitter(max_message_size)
        try:
            transport, protocol = await loop.subprocess_exec(
                lambda: ChildProcessProtocol(splitter, loop),
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=None if env is None else {**os.environ, **env},
                cwd=cwd,
                # Its own session: a Ctrl-C typed at the host's terminal is the host's to
                # handle (cancel a call), not a SIGINT that kills every server it runs.
                start_new_session=True,
                preexec_fn=_tied_to_parent(),
            )
        except OSError as exc:
            raise ConnectionClosed(_not_started(argv, cwd, exc)) from None
        process = asyncio.subprocess.Process(transport, protocol, loop)
        stdout = transport.get_pipe_transport(1)
        assert stdout is not None  # stdout=PIPE was asked for
        stdout.set_protocol(DirectStdout(stdout.get_protocol(), splitter))
        spawned = cls(
            process,
            splitter,
            stdout,  # type: ignore[arg-type]
            stderr_callback=stderr_callback,
            shutdown_timeout=shutdown_timeout,
        )
        spawned.peer_name = f"the server {shlex.join(argv)!r} (on its stdout)"
        return spawned

    @property
    def stderr_tail(self) -> list[str]:
        """The last lines the server wrote to stderr."""
        return list(self._stderr_tail)

    async def _collect_stderr(self) -> None:
        stream = self.process.stderr
        assert stream is not None
        while line := await stream.readline():
            text = line.decode("utf-8", "replace").rstrip("\r\n")
            self._stderr_tail.append(text)
            if self._stderr_callback is not None:
                try:
                    self._stderr_callback(text)
                except Exception:
                    logger.exception("stderr callback failed")

    async def close(self) -> None:
        """Close stdin, give the server time to exit, then SIGTERM, then SIGKILL."""
        if self._closed:
            return
        self._closed = True
        process = self.process
        with contextlib.suppress(ConnectionError, RuntimeError):
            self._writer.close()
        if not await self._exited_within(self._shutdown_timeout):
            _signal_group(process, signal.SIGTERM)
            if not await self._exited_within(self._shutdown_timeout):
                _signal_group(process, signal.SIGKILL)
                await process.wait()
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._stderr_task, 1.0)

    async def _exited_within(self, seconds: float) -> bool:
        try:
            await asyncio.wait_for(self.process.wait(), seconds)
        except TimeoutError:
            return False
        return True

    async def closed_reason(self) -> str:
        if self._closed:
            return "the connection was closed by the client"
        await self._exited_within(1.0)
        code = self.process.returncode
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._stderr_task), 0.5)
        what = (
            "the server process closed its stdout"
            if code is None
            else f"the server process exited with code {code}"
        )
        tail = [line for line in self._stderr_tail if line.strip()][-5:]
        return what + (f"; its stderr ended with: {' | '.join(tail)}" if tail else "")


def _signal_group(process: asyncio.subprocess.Process, sig: int) -> None:
    """`sig` to the server's process group (its own: `start_new_session`), so that what it
    started (a wrapper's child, `npx`'s node) ends with it."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, sig)


def _tied_to_parent() -> Callable[[], None] | None:
    """Linux: what a spawned child runs before exec so that it gets SIGTERM when this process
    dies (PR_SET_PDEATHSIG, through ctypes: looked up here, as the child must only call it).
    None elsewhere. The signal comes when the spawning thread ends: an event loop's thread,
    which outlives the clients it runs."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def tie() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the tie: no one will signal
            os.kill(os.getpid(), signal.SIGTERM)

    return tie


_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _not_started(argv: Sequence[str], cwd: str | os.PathLike[str] | None, exc: OSError) -> str:
    start = f"could not start the server {shlex.join(argv)!r}"
    if isinstance(exc, FileNotFoundError) and cwd is not None and not os.path.isdir(cwd):
        return f"{start}: the directory {os.fspath(cwd)!r} does not exist"
    if isinstance(exc, FileNotFoundError):
        return f"{start}: {argv[0]!r} was not found"
    if isinstance(exc, PermissionError):
        return f"{start}: {argv[0]!r} is not executable"
    return f"{start}: {exc.strerror or exc}"
