"""A handshake-era session's state as data: `SessionSnapshot`, and the changes made to it.

`initialize` fixes the revision and the client's capabilities and info; later the client
changes the rest: its log level, its resource subscriptions, and its `initialized` that ends
the handshake. The server's handlers say each change as a small typed value
(`SessionChange`); a transport shared by several processes persists and forwards those
values without looking inside (`encode_change` / `decode_change`: by the change's type, never
by a method name) and another process applies them to its copy (`SessionSnapshot.apply`, or
the server's own session state). A worker that never saw the handshake rebuilds the session
from a snapshot: `Connection.restore` makes the server connection READY at that revision with
those peer facts, and the server framework restores the rest.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any

JSONObject = dict[str, Any]

__all__ = [
    "HandshakeEnded",
    "LogLevelSet",
    "SessionChange",
    "SessionSnapshot",
    "Subscribed",
    "Unsubscribed",
    "changes_between",
    "decode_change",
    "encode_change",
]


@dataclass(frozen=True, slots=True)
class LogLevelSet:
    """The client asked for log messages at `level` and above."""

    level: str


@dataclass(frozen=True, slots=True)
class Subscribed:
    """The client subscribed to the resource `uri`."""

    uri: str


@dataclass(frozen=True, slots=True)
class Unsubscribed:
    """The client unsubscribed from the resource `uri`."""

    uri: str


@dataclass(frozen=True, slots=True)
class HandshakeEnded:
    """The client said its handshake is over (`initialized`): the server may send to it."""


SessionChange = LogLevelSet | Subscribed | Unsubscribed | HandshakeEnded

# Each change type's tag on the wire between processes (never a method name).
_TAGS: dict[type, str] = {
    LogLevelSet: "level",
    Subscribed: "sub",
    Unsubscribed: "unsub",
    HandshakeEnded: "ready",
}
_TYPES = {tag: kind for kind, tag in _TAGS.items()}


@dataclass(frozen=True, slots=True)
class SessionSnapshot:
    """A handshake-era session as agreed: `version`, the client's `capabilities` and `info`,
    its `log_level` (None: it asked for no log messages) and the URIs it subscribed to."""

    version: str
    capabilities: JSONObject = field(default_factory=dict)
    info: JSONObject = field(default_factory=dict)
    log_level: str | None = None
    subscriptions: tuple[str, ...] = ()

    def apply(self, change: SessionChange) -> SessionSnapshot:
        """This snapshot with `change` made (a snapshot is always past the handshake)."""
        if isinstance(change, LogLevelSet):
            return replace(self, log_level=change.level)
        if isinstance(change, Subscribed | Unsubscribed):
            uris = set(self.subscriptions)
            if isinstance(change, Subscribed):
                uris.add(change.uri)
            else:
                uris.discard(change.uri)
            return replace(self, subscriptions=tuple(sorted(uris)))
        return self


def encode_change(change: SessionChange) -> JSONObject:
    """`change` as a JSON object (its type's tag under "t", its fields beside it)."""
    encoded: JSONObject = {"t": _TAGS[type(change)]}
    for each in fields(change):
        encoded[each.name] = getattr(change, each.name)
    return encoded


def decode_change(encoded: object) -> SessionChange | None:
    """What `encode_change` made, back; None for anything else (a newer worker's change)."""
    if type(encoded) is not dict:
        return None
    tag = encoded.get("t")
    kind = _TYPES.get(tag) if type(tag) is str else None
    if kind is None:
        return None
    values = {each.name: encoded.get(each.name) for each in fields(kind)}
    if any(type(value) is not str for value in values.values()):
        return None
    change: SessionChange = kind(**values)
    return change


def changes_between(old: SessionSnapshot, new: SessionSnapshot) -> list[SessionChange]:
    """What makes `old` into `new` (its level, then subscriptions added, then removed)."""
    changes: list[SessionChange] = []
    if new.log_level is not None and new.log_level != old.log_level:
        changes.append(LogLevelSet(new.log_level))
    before, after = set(old.subscriptions), set(new.subscriptions)
    changes += [Subscribed(uri) for uri in sorted(after - before)]
    changes += [Unsubscribed(uri) for uri in sorted(before - after)]
    return changes
