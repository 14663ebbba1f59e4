"""The transition table (states.py), the era objects (eras.py), and a connection that follows
them: every state change a connection makes is one the table allows, and nothing else."""

from __future__ import annotations

import contextlib
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpkit.errors import ConnectionClosed, LocalProtocolViolation
from mcpkit.protocol import Initialized, RequestReceived, State, Timeout
from mcpkit.protocol.eras import HandshakeEra, PerRequestEra
from mcpkit.protocol.lifecycle import Role
from mcpkit.protocol.snapshot import SessionSnapshot
from mcpkit.protocol.states import SERVES_REQUESTS, TRANSITIONS, Step, next_state

from .conftest import Pair, line, make_pair, sent

MODERN = "2026-07-28"
PROTOCOL = Path(__file__).parents[2] / "src" / "mcpkit" / "protocol"


def test_the_table_names_every_state_for_both_roles_and_loss_closes_from_anywhere() -> None:
    for role in ("client", "server"):
        assert set(TRANSITIONS[role]) == set(State)
        for state in State:
            assert next_state(role, state, Step.LOST) is State.CLOSED
    assert set(SERVES_REQUESTS) == {"client", "server"}


def test_closed_is_final() -> None:
    for role in ("client", "server"):
        for step in Step:
            assert next_state(role, State.CLOSED, step) in (None, State.CLOSED)


def test_each_role_takes_only_its_own_steps() -> None:
    server_steps = {Step.RECEIVE_INITIALIZE, Step.RECEIVE_INITIALIZED, Step.RESTORE, Step.LOST}
    for state, steps in TRANSITIONS["server"].items():
        assert set(steps) <= server_steps, state
    for state, steps in TRANSITIONS["client"].items():
        assert not set(steps) & (server_steps - {Step.LOST}), state


def test_a_handshake_walks_the_table_on_both_sides(pair: Pair) -> None:
    client, server = pair.client, pair.server
    assert (client.state, server.state, client.era, server.era) == (State.NEW,) * 2 + (None,) * 2
    pair.client.start_initialize(now=0)
    assert client.state is State.INITIALIZING
    pair.to_server()
    assert server.state is State.INITIALIZING
    assert type(server.era) is HandshakeEra and server.era.version == server.protocol_version
    pair.to_client()
    assert client.state is State.READY
    assert type(client.era) is HandshakeEra and client.era.version == "2025-11-25"
    [ready] = pair.to_server()
    assert isinstance(ready, Initialized) and server.state is State.READY


def test_initialized_is_ignored_where_the_table_has_no_step_for_it(ready: Pair) -> None:
    notice = line({"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert ready.server.receive(notice, 0) == []  # server already READY
    assert ready.client.receive(notice, 0) == []  # a client never takes this step
    assert (ready.server.state, ready.client.state) == (State.READY, State.READY)


def test_the_era_serves_only_what_we_declared() -> None:
    pair = make_pair(server_capabilities={"tools": {}})
    pair.handshake()
    era = pair.server.era
    assert type(era) is HandshakeEra
    assert "tools/call" in era.served and "prompts/get" not in era.served
    pair.server.receive(
        line({"jsonrpc": "2.0", "id": 5, "method": "prompts/get", "params": {"name": "x"}}), 0
    )
    [error] = sent(pair.server)
    assert error["error"] == {"code": -32601, "message": "Method not found: prompts/get"}


def test_a_per_request_era_is_a_new_object_each_time_it_is_chosen(pair: Pair) -> None:
    pair.client.use_per_request(MODERN, {"capabilities": {"tools": {}}})
    first = pair.client.era
    assert type(first) is PerRequestEra and first.served == {}
    pair.client.send_request("tools/list", now=0)
    assert first.allowed == {"tools/list"}  # checked once against the discovered capabilities
    pair.client.use_handshake()
    assert pair.client.era is None and pair.client.state is State.NEW
    pair.client.use_per_request(MODERN)
    second = pair.client.era
    assert type(second) is PerRequestEra and second is not first and second.allowed == set()


def test_use_per_request_abandons_a_pending_initialize(pair: Pair) -> None:
    pair.client.start_initialize(now=0, timeout=Timeout(1))
    pair.client.use_per_request(MODERN)
    assert pair.client.state is State.READY and pair.client.requests_pending == 0
    assert pair.client.expire(5) == []  # the initialize's deadline went with it


def test_an_initialize_refused_with_an_error_leaves_the_client_new(pair: Pair) -> None:
    pair.client.start_initialize(now=0)
    sent(pair.client)
    error = {"code": -32602, "message": "nope"}
    pair.client.receive(line({"jsonrpc": "2.0", "id": 1, "error": error}), 0)
    assert pair.client.state is State.NEW and pair.client.era is None


def test_an_initialize_that_times_out_closes_the_client(pair: Pair) -> None:
    pair.client.start_initialize(now=0, timeout=Timeout(1))
    [failed] = pair.client.expire(2)
    assert type(failed).__name__ == "InitializeFailed" and pair.client.state is State.CLOSED


def test_opening_calls_on_a_closed_connection_say_it_is_closed(pair: Pair) -> None:
    # Decision: a closed connection stays closed. use_handshake used to set it back to NEW,
    # and the initialize that followed waited for an answer that could never come.
    pair.client.use_per_request(MODERN)
    pair.client.connection_lost()
    with pytest.raises(ConnectionClosed):
        pair.client.use_handshake()
    with pytest.raises(ConnectionClosed):
        pair.client.start_initialize(now=0)
    with pytest.raises(ConnectionClosed):
        pair.client.use_per_request(MODERN)
    assert pair.client.state is State.CLOSED


def test_a_server_refuses_the_clients_opening_calls(pair: Pair) -> None:
    with pytest.raises(LocalProtocolViolation):
        pair.server.start_initialize(now=0)
    with pytest.raises(LocalProtocolViolation):
        pair.server.use_per_request(MODERN)
    assert pair.server.state is State.NEW


def test_the_state_is_read_only(pair: Pair) -> None:
    with pytest.raises(AttributeError):
        pair.client.state = State.READY  # type: ignore[misc]


def test_the_core_needs_no_type_ignore() -> None:
    # The wire-header rules (http_headers.py) are outside the core connection.
    core = [path for path in PROTOCOL.glob("*.py") if path.name != "http_headers.py"]
    found = [
        f"{path.name}:{number}"
        for path in core
        for number, text in enumerate(path.read_text().splitlines(), 1)
        if re.search(r"type:\s*ignore", text)
    ]
    assert found == []


def test_what_a_closed_connection_refuses_to_send(ready: Pair) -> None:
    ready.client.connection_lost()
    with pytest.raises(ConnectionClosed):
        ready.client.send_request("tools/list", now=0)
    with pytest.raises(ConnectionClosed):
        ready.client.send_notification("notifications/roots/list_changed")
    assert ready.client.receive(line({"jsonrpc": "2.0", "id": 1, "method": "ping"}), 0) == []


def test_sending_rules_name_what_is_wrong(ready: Pair) -> None:
    with pytest.raises(LocalProtocolViolation, match="sent by the connection itself"):
        ready.client.send_notification("notifications/cancelled", {"requestId": 1})
    with pytest.raises(LocalProtocolViolation, match="a notification, not a request"):
        ready.client.send_request("notifications/roots/list_changed", now=0)
    with pytest.raises(LocalProtocolViolation, match="before initialization completes"):
        make_pair().client.send_notification("notifications/roots/list_changed")


def test_a_per_request_client_may_ask_for_tasks_the_registry_does_not_list(pair: Pair) -> None:
    pair.client.use_per_request(MODERN)
    request_id = pair.client.send_request("tasks/get", {"taskId": "t1"}, now=0)
    [out] = pair.client.data_to_send()
    assert out.id == request_id and out.version == MODERN and out.method == "tasks/get"


CLIENT_OPS = st.lists(
    st.sampled_from(
        [
            "start_initialize",
            "use_per_request",
            "use_handshake",
            "answer",
            "refuse",
            "expire",
            "lose",
        ]
    ),
    max_size=12,
)
SERVER_OPS = st.lists(st.sampled_from(["initialize", "initialized", "bad", "lose"]), max_size=8)
INIT_PARAMS = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {}}


def _followed_the_table(role: Role, before: State, after: State) -> bool:
    return after is before or after in TRANSITIONS[role][before].values()


@given(ops=CLIENT_OPS)
def test_a_client_changes_state_only_along_the_table(ops: list[str]) -> None:
    pair = make_pair()
    client, now = pair.client, 0.0
    for op in ops:
        before = client.state
        with contextlib.suppress(LocalProtocolViolation, ConnectionClosed):
            if op == "start_initialize":
                client.start_initialize(now=now, timeout=Timeout(1))
            elif op == "use_per_request":
                client.use_per_request(MODERN)
            elif op == "use_handshake":
                client.use_handshake()
            elif op in ("answer", "refuse"):
                pair.to_server()
                if op == "refuse":
                    pair.server.data_to_send()
                    error = {"code": -32602, "message": "no"}
                    client.receive(line({"jsonrpc": "2.0", "id": 1, "error": error}), now)
                else:
                    pair.to_client()
            elif op == "expire":
                now += 2
                client.expire(now)
            else:
                client.connection_lost()
        assert _followed_the_table("client", before, client.state), (op, before, client.state)
        if client.state is not State.CLOSED:  # an era exactly when one is agreed
            assert (client.era is None) == (client.state is not State.READY)


@given(ops=SERVER_OPS)
def test_a_server_changes_state_only_along_the_table(ops: list[str]) -> None:
    server = make_pair().server
    for request_id, op in enumerate(ops):
        before = server.state
        if op == "initialize":
            message = {"id": request_id, "method": "initialize", "params": INIT_PARAMS}
        elif op == "initialized":
            message = {"method": "notifications/initialized"}
        elif op == "bad":
            message = {"id": request_id, "method": "initialize", "params": {}}
        else:
            server.connection_lost()
            message = {"method": "notifications/initialized"}
        server.receive(line({"jsonrpc": "2.0", **message}), 0)
        assert _followed_the_table("server", before, server.state), (op, before, server.state)
        if server.state is not State.CLOSED:
            assert (server.era is None) == (server.state is State.NEW)


def test_a_restored_server_connection_serves_as_the_one_that_answered_initialize() -> None:
    """Another worker's session: READY at the agreed revision, the client's facts kept, and a
    request answered at once, with no initialize on this connection."""
    pair = make_pair()
    server = pair.server
    client_caps = {"roots": {}}
    snapshot = SessionSnapshot("2025-06-18", client_caps, {"name": "c", "version": "1"})
    server.restore(snapshot)
    assert server.state is State.READY and server.protocol_version == "2025-06-18"
    assert type(server.era) is HandshakeEra
    assert (server.peer_capabilities, server.peer_info) == (client_caps, snapshot.info)
    [request] = server.receive(line({"jsonrpc": "2.0", "id": 7, "method": "tools/list"}), 0)
    assert isinstance(request, RequestReceived) and request.method == "tools/list"
    events = server.receive(line({"jsonrpc": "2.0", "id": 8, "method": "ping"}), 0)
    assert events == [] and sent(server)[-1] == {"jsonrpc": "2.0", "id": 8, "result": {}}
    again = {"jsonrpc": "2.0", "id": 9, "method": "initialize", "params": INIT_PARAMS}
    server.receive(line(again), 0)
    assert sent(server)[-1]["error"]["code"] == -32600  # initialize was, in effect, received


def test_restore_is_only_for_a_new_server_at_a_revision_it_speaks(pair: Pair) -> None:
    snapshot = SessionSnapshot("2025-06-18")
    with pytest.raises(LocalProtocolViolation):
        pair.client.restore(snapshot)
    with pytest.raises(LocalProtocolViolation, match="not a handshake revision"):
        make_pair().server.restore(SessionSnapshot(MODERN))
    pair.handshake()
    with pytest.raises(LocalProtocolViolation):
        pair.server.restore(snapshot)
    pair.server.connection_lost()
    with pytest.raises(ConnectionClosed):
        pair.server.restore(snapshot)
