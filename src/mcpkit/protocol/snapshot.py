"""`SessionSnapshot`: what a handshake-era session fixed, so another process can go on serving it.

`initialize` fixes the revision and the client's capabilities and info; later requests fix
the log level (`logging/setLevel`) and the resource subscriptions. A server that keeps these
somewhere shared (Redis, for several workers) rebuilds the session from them on a worker that
never saw its handshake: `Connection.restore` makes the server connection READY at that
revision with those peer facts, and the server framework restores the rest.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

JSONObject = dict[str, Any]

__all__ = ["SessionSnapshot"]


@dataclass(frozen=True, slots=True)
class SessionSnapshot:
    """A handshake-era session as agreed: `version`, the client's `capabilities` and `info`,
    its `log_level` (None: it asked for no log messages) and the URIs it subscribed to."""

    version: str
    capabilities: JSONObject = field(default_factory=dict)
    info: JSONObject = field(default_factory=dict)
    log_level: str | None = None
    subscriptions: tuple[str, ...] = ()
