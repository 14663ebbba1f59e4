"""Going on with a handshake-era HTTP session that another process opened.

Several processes may take turns serving one upstream session: the workers of a gateway, each
serving requests of one downstream session (docs/gateway.md, "Several workers"). The process
that opened the session describes it (`Client.opened_session()`: the `Mcp-Session-Id` and
the InitializeResult); another goes on with it (`Client.resume(...)`) without a handshake.
Each process numbers its requests from its own random base, so that two never send one id in
the same session while both have requests in flight.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any, Protocol

JSONObject = dict[str, Any]

__all__ = ["OpenedSession"]

# Resumed clients number their requests from [2**40, 2**52): far above what the opening
# process reaches, below 2**53 (a JSON number any peer holds exactly).
_BASE_LOW, _BASE_SPAN = 2**40, 2**52 - 2**40


@dataclass(frozen=True, slots=True)
class OpenedSession:
    """A handshake-era Streamable HTTP session: its `session_id` (the `Mcp-Session-Id`) and
    the server's `initialize_result` (protocolVersion, capabilities, serverInfo,
    instructions) as the opening client received it."""

    session_id: str
    initialize_result: JSONObject


class ResumableTransport(Protocol):
    """The Streamable HTTP client transport, as `Client.resume` and `detach` use it."""

    def resume_session(self, session_id: str, protocol_version: str) -> None: ...

    def keep_session(self) -> None: ...


def resume_base() -> int:
    """Where a resumed client's request ids start (random, each process its own range)."""
    return _BASE_LOW + secrets.randbelow(_BASE_SPAN)
