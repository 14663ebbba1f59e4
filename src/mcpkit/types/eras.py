"""The two protocol eras, named by how a revision is agreed: `Era.HANDSHAKE`, `Era.PER_REQUEST`.

- "handshake" (revisions 2024-11-05 to 2025-11-25): `initialize` agrees one revision for the
  whole session.
- "per-request" (2026-07-28 on): no handshake; every request names its revision (and the
  client's capabilities) in its envelope.

Why not "stateless" for the second, as issue 23 suggested: `http_app(stateless=True)` already
names a handshake-era HTTP mode (initialize on every POST, no session id), so a "stateless
era" would be read as that. "per-request" is what the protocol core calls it too
(`protocol.eras.PerRequestEra`).

The names replace "legacy" and "modern" (which said only how old an era is, and "legacy" also
named the 2024-11-05 HTTP+SSE transport, now `http_app(http_sse=True)`). For one release the
old spellings still work, each with a DeprecationWarning at the user's line: a client mode
(`mode="legacy"`), `mcpkit.testing.connect(era="legacy")`, comparisons (`client.era ==
"modern"` is True for `Era.PER_REQUEST`), `ctx.modern`, `mcpkit.types.MODERN_VERSIONS`,
`Connection.modern` / `use_modern`, the module `mcpkit.protocol.modern` and
`http_app(legacy_sse=...)`. `Era` is a `str` enum, so `client.era == "per-request"` holds and
printing it shows the new value.
"""

from __future__ import annotations

from enum import StrEnum

from mcpkit.types.deprecation import warn_deprecated

__all__ = ["OLD_ERA_NAMES", "Era", "era_named"]


class Era(StrEnum):
    """How a connection agrees its protocol revision (see the module notes)."""

    HANDSHAKE = "handshake"
    PER_REQUEST = "per-request"

    def __eq__(self, other: object) -> bool:
        # An old spelling still compares equal, for one release, with a warning.
        if type(other) is str and other in OLD_ERA_NAMES:
            return era_named(other) is self
        return str.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = str.__hash__


# The names before issue 23: deprecated, accepted for one release.
OLD_ERA_NAMES = {"legacy": Era.HANDSHAKE, "modern": Era.PER_REQUEST}


def era_named(name: str) -> Era:
    """The `Era` called `name` ("handshake", "per-request"; the old "legacy" and "modern" with
    a DeprecationWarning). Raises ValueError for any other name."""
    old = OLD_ERA_NAMES.get(name) if type(name) is str else None
    if old is not None:
        warn_deprecated(
            f"the era name {name!r} is deprecated; use {old.value!r} (mcpkit.Era.{old.name})"
        )
        return old
    return Era(name)
