"""What a transport offers the runtime: whole messages in, `Outgoing` records out, close.

Two kinds, told apart by type, not by probing attributes:

- `PullTransport`: the session's pump task awaits `read()` for each message (memory, HTTP
  sessions on the server, the HTTP clients).
- `PushTransport`: the transport calls back as messages arrive (`attach`), so a message is
  handled inside the transport's own data callback with no task wake-up (stdio, both the
  server's pipes and the subprocess a client spawns).

Both derive from `Transport`, which carries what a transport knows beyond bytes, with
defaults for transports that know nothing more: who the peer is once authenticated
(`principal`), and control over a request's response stream (`close_stream`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable

from mcpkit.protocol import Outgoing, Parsed, RequestId
from mcpkit.protocol.snapshot import SessionChange
from mcpkit.runtime.principal import Principal

# What a transport hands the connection: the bytes of one message, or what `jsonrpc.parse`
# made of them when the transport had to parse them to route them.
Incoming = bytes | Parsed


class Transport(ABC):
    """A duplex channel of whole JSON-RPC messages (framing is the transport's business)."""

    # The peer, as an authenticating transport verified it; None without authorization.
    principal: Principal | None = None
    # The peer in log lines and error hints ("the server 'python server.py'").
    peer_name: str = "the peer"
    # Set by the session running on it: makes a change another process made to this session's
    # state here too (a transport serving one session from several processes calls it).
    apply_change: Callable[[SessionChange], None] | None = None

    @abstractmethod
    def write(self, messages: list[Outgoing]) -> None:
        """Send messages in order. Must not block; buffer if needed. Raises ConnectionError
        (or RuntimeError) when the channel is closed."""

    def backlogged(self) -> bool:
        """True when written data piles up and the reader should wait for `drain`."""
        return False

    async def drain(self) -> None:  # noqa: B027 - most transports never back up
        """Wait until written data has gone out (after `backlogged`)."""

    @abstractmethod
    async def close(self) -> None:
        """Stop sending and release resources. Idempotent."""

    @abstractmethod
    async def closed_reason(self) -> str:
        """Why the peer went away, for error messages (exit code, stderr tail, ...)."""

    def changed(self, change: SessionChange, related: RequestId | None) -> None:  # noqa: B027
        """The server changed this session's state (`related`: the peer's request that did,
        answered after this call). A transport serving the session from several processes
        keeps and forwards `change` as it is; the others have nothing to do (the default)."""

    def close_stream(self, request_id: RequestId) -> bool:
        """End the response stream of the peer's request `request_id` now, without ending the
        request (Streamable HTTP at 2025-11-25: the client resumes it). False when this
        transport cannot (the default)."""
        return False


class PullTransport(Transport):
    """A transport whose messages the session reads, one `await read()` at a time."""

    @abstractmethod
    async def read(self) -> Incoming | None:
        """The next message; None once the peer has gone (EOF)."""


class PushTransport(Transport):
    """A transport that hands messages over as they arrive instead of being read."""

    @abstractmethod
    def attach(
        self,
        receive: Callable[[Incoming], None],
        chunk_done: Callable[[], None],
        eof: Callable[[], None],
    ) -> None:
        """Start delivering: `receive(message)` for each complete message, `chunk_done()` after
        each group that arrived together (their answers leave in one write), `eof()` once the
        peer is gone. Messages that arrived before `attach` are delivered first."""


MessageTransport = PullTransport | PushTransport
