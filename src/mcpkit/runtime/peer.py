"""`Peer`: what a request handler may know about, and do with, the client it serves.

Two things serve requests: a `Session` (a connection: a handshake-era session, a stdio pipe)
and a `RequestPeer` (one sessionless request: a 2026-07-28 HTTP POST, or a POST to a
stateless endpoint). Handlers, and the server's `Context`, see either through this interface
and never the transport beneath it.
"""

from __future__ import annotations

from typing import Any, Protocol

from mcpkit.protocol import RequestId, Timeout
from mcpkit.runtime.principal import Principal

JSONObject = dict[str, Any]


class Peer(Protocol):
    @property
    def principal(self) -> Principal | None:
        """The authenticated caller (None without authorization)."""
        ...

    @property
    def state(self) -> Any:
        """Whatever the server keeps per connection (None for a sessionless request)."""
        ...

    @property
    def protocol_version(self) -> str | None:
        """The revision agreed at initialize, or the request's own (sessionless)."""
        ...

    @property
    def peer_info(self) -> JSONObject | None: ...

    @property
    def peer_capabilities(self) -> JSONObject | None: ...

    def report_progress(
        self, request_id: RequestId, progress: float, total: float | None, message: str | None
    ) -> bool:
        """Progress on the peer's request; False when nobody is listening."""
        ...

    def notify(
        self, method: str, params: JSONObject | None = None, *, related_id: RequestId | None = None
    ) -> None:
        """Send a notification (raises before anything is sent when it is not allowed)."""
        ...

    async def request(
        self,
        method: str,
        params: JSONObject | None = None,
        *,
        timeout: Timeout | None = None,
        related_id: RequestId | None = None,
    ) -> JSONObject:
        """Send the peer a request and wait for its result."""
        ...

    def close_stream(self, request_id: RequestId) -> bool:
        """End the response stream of `request_id` now (the client resumes it); False when
        the transport cannot."""
        ...
