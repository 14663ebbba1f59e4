"""`ConnectionConfig`: who we are, as a connection (either role) sees it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mcpkit.protocol.lifecycle import Role
from mcpkit.protocol.per_request import CacheHint
from mcpkit.types.deprecation import warn_deprecated
from mcpkit.types.versions import HANDSHAKE_VERSIONS, PER_REQUEST_VERSIONS

JSONObject = dict[str, Any]


@dataclass(frozen=True, slots=True)
class ConnectionConfig:
    """Who we are. `versions` are the handshake revisions we speak, oldest first (a client
    offers the last); `per_request` the per-request revisions (2026-07-28 on). A server
    stamps per-request results with `cache_hints` (None: the defaults) and, with `announce`,
    its info; it answers a request past `max_in_flight` unanswered ones with -32000 (busy)."""

    role: Role
    info: JSONObject
    capabilities: JSONObject = field(default_factory=dict)
    instructions: str | None = None
    versions: tuple[str, ...] = HANDSHAKE_VERSIONS
    per_request: tuple[str, ...] = PER_REQUEST_VERSIONS
    cache_hints: dict[str, CacheHint] | None = None
    announce: bool = True
    max_in_flight: int | None = None  # the peer's requests served at once; None: no bound

    @property
    def all_versions(self) -> tuple[str, ...]:
        return self.versions + self.per_request

    @property
    def modern(self) -> tuple[str, ...]:
        """Deprecated spelling of `per_request` (until 0.1.0; eras named by mechanism)."""
        warn_deprecated("ConnectionConfig.modern is deprecated; use per_request")
        return self.per_request
