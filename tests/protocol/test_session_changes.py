"""A session's state as data: the typed changes, how a snapshot takes them, how they cross
between processes (by a tag, never a method name), and the end of a handshake learned from
another process. No event loop."""

from __future__ import annotations

import orjson
import pytest

from mcpkit.protocol import Initialized, State
from mcpkit.protocol.snapshot import (
    HandshakeEnded,
    LogLevelSet,
    SessionChange,
    SessionSnapshot,
    Subscribed,
    Unsubscribed,
    changes_between,
    decode_change,
    encode_change,
)

from .conftest import line, make_pair

INIT_PARAMS = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"sampling": {}},
    "clientInfo": {"name": "c", "version": "1"},
}
CHANGES: list[SessionChange] = [
    LogLevelSet("warning"),
    Subscribed("file:///a"),
    Unsubscribed("file:///a"),
    HandshakeEnded(),
]


def test_a_snapshot_takes_each_change_and_stays_unchanged_itself() -> None:
    start = SessionSnapshot("2025-06-18", subscriptions=("file:///b",))
    leveled = start.apply(LogLevelSet("error"))
    assert leveled.log_level == "error" and start.log_level is None
    subscribed = leveled.apply(Subscribed("file:///a")).apply(Subscribed("file:///a"))
    assert subscribed.subscriptions == ("file:///a", "file:///b")  # a set, kept sorted
    unsubscribed = subscribed.apply(Unsubscribed("file:///b")).apply(Unsubscribed("file:///x"))
    assert unsubscribed.subscriptions == ("file:///a",)
    assert unsubscribed.apply(HandshakeEnded()) is unsubscribed  # a snapshot is past it


@pytest.mark.parametrize("change", CHANGES, ids=lambda c: type(c).__name__)
def test_a_change_crosses_as_json_by_its_tag_and_comes_back_equal(change: SessionChange) -> None:
    encoded = encode_change(change)
    assert "/" not in encoded["t"]  # a tag of our own, not a method name
    assert decode_change(orjson.loads(orjson.dumps(encoded))) == change


@pytest.mark.parametrize(
    "encoded",
    [
        None,
        "level",
        ["t", "level"],
        {},
        {"t": 3},
        {"t": "logging/setLevel", "level": "info"},  # a method name is not a tag
        {"t": "a newer worker's change"},
        {"t": "level"},  # its field missing
        {"t": "sub", "uri": 7},  # its field of another type
    ],
)
def test_what_is_not_a_known_change_decodes_to_none(encoded: object) -> None:
    assert decode_change(encoded) is None


def test_changes_between_two_snapshots_make_the_first_into_the_second() -> None:
    old = SessionSnapshot("2025-11-25", log_level="info", subscriptions=("a://1", "a://2"))
    new = SessionSnapshot("2025-11-25", log_level="debug", subscriptions=("a://2", "a://3"))
    changes = changes_between(old, new)
    assert changes == [LogLevelSet("debug"), Subscribed("a://3"), Unsubscribed("a://1")]
    caught_up = old
    for change in changes:
        caught_up = caught_up.apply(change)
    assert caught_up == new
    assert changes_between(new, new) == []
    # a level never set on the newer side is not a change (there is no "unset")
    assert (
        changes_between(old, SessionSnapshot("2025-11-25", subscriptions=old.subscriptions)) == []
    )


def test_the_handshake_ends_here_when_initialized_reached_another_process() -> None:
    """The connection that answered initialize learns of `initialized` as data: READY, one
    Initialized event with the agreed facts; a second time, nothing."""
    pair = make_pair()
    server = pair.server
    server.receive(
        line({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT_PARAMS}), 0
    )
    server.data_to_send()
    [event] = server.end_handshake()
    assert isinstance(event, Initialized) and not event.again
    assert event.peer_info == INIT_PARAMS["clientInfo"]
    assert server.state is State.READY
    assert server.end_handshake() == []


def test_a_restored_copy_learns_once_that_the_client_ended_the_handshake() -> None:
    server = make_pair().server
    server.restore(SessionSnapshot("2025-06-18", {"roots": {}}, {"name": "c", "version": "1"}))
    [event] = server.end_handshake()
    assert isinstance(event, Initialized) and event.again
    assert (event.protocol_version, event.peer_capabilities) == ("2025-06-18", {"roots": {}})
    assert server.end_handshake() == []
