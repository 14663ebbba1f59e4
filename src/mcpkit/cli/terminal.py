"""The chat's terminal: lines in, text out, and what Ctrl-C means.

On a terminal, input has line editing and history (prompt_toolkit, the `mcpkit[host]` extra);
piped (or without the extra), lines are read as they come, so scripts and tests drive it the
same way. Ctrl-C at a prompt raises `Interrupted` (with text typed, it clears the line first,
as a shell does); Ctrl-C while a turn runs (the terminal is not reading then) cancels that
turn, and a second one while it is still cancelling means leave.
"""

from __future__ import annotations

import asyncio
import contextlib
import getpass
import os
import signal
import stat
import sys
from collections.abc import Callable, Iterator
from typing import Any

from mcpkit.errors import MCPError
from mcpkit.host.visible import visible


class Interrupted(MCPError):
    """Ctrl-C at a prompt (an Exception, so it never escapes a task as KeyboardInterrupt)."""


class _Lines:
    """Lines of a file descriptor, read without blocking the event loop (a pipe or a
    terminal in line mode) or blocking (before the loop's work starts, or a regular file)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._buffer = b""
        self._eof = False
        try:
            self._pollable = not stat.S_ISREG(os.fstat(fd).st_mode)
        except OSError:
            self._pollable = False

    def _take(self) -> str | None:
        if b"\n" in self._buffer:
            line, self._buffer = self._buffer.split(b"\n", 1)
            return line.decode(errors="replace")
        return None

    def _fill(self) -> None:
        chunk = os.read(self.fd, 65536)
        self._buffer += chunk
        self._eof = not chunk

    def _rest(self) -> str | None:
        rest, self._buffer = self._buffer, b""
        return rest.decode(errors="replace") if rest else None

    def read_now(self) -> str | None:
        """The next line, blocking; None at end of input."""
        while (line := self._take()) is None and not self._eof:
            self._fill()
        return line if line is not None else self._rest()

    async def read(self) -> str | None:
        """The next line without blocking the loop; None at end of input."""
        if not self._pollable:
            return self.read_now()
        loop = asyncio.get_running_loop()
        while (line := self._take()) is None and not self._eof:
            readable = loop.create_future()
            try:
                loop.add_reader(self.fd, _settle, readable)
            except PermissionError:  # a file epoll refuses (/dev/null): it never blocks
                self._pollable = False
                return self.read_now()
            try:
                await readable
            finally:
                loop.remove_reader(self.fd)
            self._fill()
        return line if line is not None else self._rest()


class Terminal:
    """Lines in, text out: prompt_toolkit on a terminal, plain lines through a pipe."""

    def __init__(self) -> None:
        self.interactive = bool(sys.stdin and sys.stdin.isatty() and sys.stdout.isatty())
        self._session: Any = None  # made at the first prompt: import it only if needed
        self._lines = _Lines(_stdin_fd())
        self._waiting: asyncio.Future[str | None] | None = None
        self._one_at_a_time = asyncio.Lock()
        # Told of a Ctrl-C that came while no prompt was reading (a turn in flight).
        self.on_interrupt: Callable[[], None] | None = None

    async def ask(self, prompt: str, *, default: str = "", secret: bool = False) -> str | None:
        """The next line (None at end of input: Ctrl-D). `default`: text already typed, to
        edit (on a terminal). One question at a time: a server's question that comes while
        another is asked waits for it. Raises Interrupted on Ctrl-C."""
        async with self._one_at_a_time:
            if self.interactive and self._session is None:
                self._session = _prompt_session()
            if self._session is not None and self._session is not False:
                return await self._prompt(prompt, default, secret)
            self.say(prompt, end="")
            self._waiting = asyncio.ensure_future(self._lines.read())
            try:
                return await self._waiting
            except asyncio.CancelledError:
                if self._waiting.cancelled() and not _current_cancelling():
                    raise Interrupted from None  # cancelled by Ctrl-C, not by the caller
                raise
            finally:
                self._waiting = None

    async def _prompt(self, prompt: str, default: str, secret: bool) -> str | None:
        try:
            line: str = await self._session.prompt_async(
                prompt, default=default, is_password=secret, handle_sigint=False
            )
        except EOFError:
            return None
        except KeyboardInterrupt:
            raise Interrupted from None
        return line

    def ask_now(self, prompt: str, *, secret: bool = False) -> str | None:
        """A line asked before the chat starts (blocking); secret: not echoed on a terminal.
        None at end of input."""
        if self.interactive:
            try:
                return getpass.getpass(prompt) if secret else input(prompt)
            except EOFError:
                return None
        self.say(prompt, end="")
        return self._lines.read_now()

    def say(self, text: str, end: str = "\n") -> None:
        """Print `text`; whatever control characters reach here are shown, never obeyed."""
        sys.stdout.write(visible(text, lines=True) + end)
        sys.stdout.flush()

    @contextlib.contextmanager
    def catching_ctrl_c(self) -> Iterator[None]:
        """While inside: SIGINT (Ctrl-C when no prompt has the terminal in raw mode) stops
        the prompt reading, else goes to `on_interrupt`, instead of raising
        KeyboardInterrupt wherever the program happens to be."""
        loop = asyncio.get_running_loop()
        try:
            loop.add_signal_handler(signal.SIGINT, self._interrupt)
        except (NotImplementedError, RuntimeError):  # not the main thread, or no signals
            yield
            return
        try:
            yield
        finally:
            loop.remove_signal_handler(signal.SIGINT)

    def _interrupt(self) -> None:
        if self._waiting is not None and not self._waiting.done():
            self._waiting.cancel()
            return
        app = getattr(self._session, "app", None)
        if app is not None and app.is_running and not app.future.done():
            # A SIGINT that came while prompt_toolkit was taking the terminal: as its Ctrl-C.
            app.exit(exception=KeyboardInterrupt)
            return
        if self.on_interrupt is not None:
            self.on_interrupt()


def _stdin_fd() -> int:
    try:
        return sys.stdin.fileno()
    except (AttributeError, ValueError, OSError):  # no stdin at all: reads end at once
        return os.open(os.devnull, os.O_RDONLY)


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _current_cancelling() -> int:
    task = asyncio.current_task()
    return task.cancelling() if task is not None else 0


def _prompt_session() -> Any:
    try:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.key_binding import KeyBindings
    except ImportError:  # without the extra: plain input still works
        return False
    keys = KeyBindings()

    @keys.add("c-c")
    def _(event: Any) -> None:
        buffer = event.app.current_buffer
        if buffer.text:  # as a shell does: the first Ctrl-C drops what was typed
            buffer.reset()
        else:
            event.app.exit(exception=KeyboardInterrupt, style="class:aborting")

    return PromptSession(key_bindings=keys)
