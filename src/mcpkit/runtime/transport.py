"""The tiny interface a transport offers the runtime: read one message, write some, close."""

from __future__ import annotations

from typing import Protocol

from mcpkit.protocol import Outgoing


class MessageTransport(Protocol):
    """A duplex channel of whole JSON-RPC messages (framing is the transport's business)."""

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
