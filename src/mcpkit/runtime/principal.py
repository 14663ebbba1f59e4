"""Who is on the other end of a connection, once a transport has authenticated it.

An HTTP transport with authorization verifies the bearer token of each request and hands the
result down as a `Principal`; stdio and unauthenticated HTTP have none (None). The server binds
sessions, sealed request state and tasks to it, and handlers read it as `ctx.principal`.
It lives in the runtime because every layer above needs its type and none below does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Principal:
    """A verified caller. `subject` is the token's `sub` (the user, or the client itself for
    machine-to-machine tokens), `client_id` the OAuth client that holds the token, `scopes`
    what the token grants, `claims` every claim as verified (for application rules), and
    `expires_at` the token's expiry (seconds since the epoch) when it has one. The token
    itself is never kept: nothing downstream may pass it on."""

    subject: str
    client_id: str | None = None
    scopes: frozenset[str] = frozenset()
    claims: Mapping[str, Any] = field(default_factory=dict, compare=False)
    expires_at: float | None = None
    # The string sessions and request state are bound to: the subject, qualified by the client,
    # so the same user through two different clients is two principals. Made once: it is
    # compared on every request of a session.
    key: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        client = self.client_id or ""
        object.__setattr__(self, "key", f"{len(client)}:{client}:{self.subject}")

    def has_scopes(self, needed: frozenset[str] | set[str] | tuple[str, ...]) -> bool:
        return self.scopes.issuperset(needed)
