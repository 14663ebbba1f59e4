"""The era a connection speaks, as an object chosen once: the handshake, or per-request.

How it works. A connection has no era until one is agreed (`Connection.era` is None), then
exactly one of these, fixed for as long as it lasts:

- `HandshakeEra` (revisions 2024-11-05 to 2025-11-25): `initialize` agreed one revision for
  the whole session. Chosen by a server when it answers `initialize`, by a client when it
  accepts the answer.
- `PerRequestEra` (2026-07-28 on, client side): no handshake; every request we send carries
  the envelope (`meta`: our version, capabilities and identity). Chosen by `use_per_request`.

Each holds what that era settles, worked out once instead of per message: the revision, the
requests the peer may send us that our declared capabilities serve (`served`), and the
requests of ours already checked against the peer's capabilities (`allowed`, filled as they
are first sent). A server serves a 2026-07-28 request that arrives on its connection by the
server's rules (`serving.ServerRules`) whatever the connection's era: such a request has no
session, so it has no era either.
"""

from __future__ import annotations

from typing import Any

from mcpkit.protocol.lifecycle import Role, has_capability, inbound_requests
from mcpkit.protocol.per_request import envelope_meta
from mcpkit.types.methods import MethodInfo

JSONObject = dict[str, Any]

__all__ = ["Era", "HandshakeEra", "PerRequestEra"]


class HandshakeEra:
    """The revision `initialize` agreed, for the whole session."""

    __slots__ = ("allowed", "served", "version")

    def __init__(self, role: Role, version: str, capabilities: JSONObject) -> None:
        self.version = version
        self.served = _served(role, version, capabilities)
        self.allowed: set[str] = set()


class PerRequestEra:
    """A client speaking a per-request revision: `meta` goes on every request it sends."""

    __slots__ = ("allowed", "meta", "served", "version")

    def __init__(self, version: str, capabilities: JSONObject, info: JSONObject) -> None:
        self.version = version
        self.meta = envelope_meta(version, capabilities, info)
        self.served: dict[str, MethodInfo] = {}  # a 2026-07-28 server sends no requests
        self.allowed: set[str] = set()


Era = HandshakeEra | PerRequestEra


def _served(role: Role, version: str, capabilities: JSONObject) -> dict[str, MethodInfo]:
    """The requests the peer may send `role` at `version` that `capabilities` serve: a method
    needing a capability we did not declare is not served (-32601)."""
    served = {}
    for name, info in inbound_requests(role, version).items():
        needed = info.capability_at(version)
        if needed is None or has_capability(capabilities, needed):
            served[name] = info
    return served
