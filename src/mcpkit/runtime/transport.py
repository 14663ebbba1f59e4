"""The tiny interface a transport offers the runtime: read one message, write some, close."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from mcpkit.protocol import Outgoing


class MessageTransport(Protocol):
    """A duplex channel of whole JSON-RPC messages (framing is the transport's business).

    Messages come in one of two ways: `read()` (pulled by the session's pump task), or
    `attach(...)` (pushed from the transport's own callbacks; see `PushTransport`).
    """

    async def read(self) -> bytes | None:
        """The next message; None once the peer has gone (EOF)."""
        ...

    def write(self, messages: list[Outgoing]) -> None:
        """Send messages in order. Must not block; buffer if needed."""
        ...

    def backlogged(self) -> bool:
        """True when written data piles up and the reader should wait for `drain`."""
        ...

    async def drain(self) -> None: ...

    async def close(self) -> None:
        """Stop sending and release resources. Idempotent."""
        ...

    async def closed_reason(self) -> str:
        """Why the peer went away, for error messages (exit code, stderr tail, ...)."""
        ...


class PushTransport(Protocol):
    """A transport that hands messages over as they arrive instead of being read: it has
    `attach` in place of `read`, and the rest of `MessageTransport`.

    `attach(receive, chunk_done, eof)`: `receive(message)` for each complete message (its
    bytes, or a request the transport already parsed: `Connection.receive` takes either),
    then `chunk_done()` after each batch that arrived together, `eof()` once the peer is gone.
    """

    def attach(
        self,
        receive: Callable[[Any], None],
        chunk_done: Callable[[], None],
        eof: Callable[[], None],
    ) -> None: ...
