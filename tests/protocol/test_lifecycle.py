"""Handshake, version negotiation and capability rules of the sans-IO core."""

from __future__ import annotations

import pytest

from mcpkit.errors import (
    CapabilityNotDeclared,
    LocalProtocolViolation,
    ProtocolError,
    UnsupportedProtocolVersion,
)
from mcpkit.protocol import (
    Connection,
    ConnectionConfig,
    Initialized,
    InitializeFailed,
    MessageRejected,
    RequestReceived,
    State,
)
from mcpkit.protocol.lifecycle import (
    check_initialize_params,
    check_initialize_result,
    initialize_params,
)
from mcpkit.types.versions import HANDSHAKE_VERSIONS

from .conftest import SERVER_INFO, Pair, line, make_pair, sent


def test_handshake_exchanges_info_capabilities_and_instructions(pair: Pair) -> None:
    pair.client.start_initialize(now=0)
    [request] = list(sent(pair.client))
    assert request["method"] == "initialize"
    assert request["params"]["protocolVersion"] == HANDSHAKE_VERSIONS[-1]
    assert pair.server.receive(line(request), 0) == []
    [reply] = sent(pair.server)
    assert reply["result"]["serverInfo"] == SERVER_INFO
    assert reply["result"]["instructions"] == "be nice"
    [event] = pair.client.receive(line(reply), 0)
    assert isinstance(event, Initialized)
    assert event.protocol_version == HANDSHAKE_VERSIONS[-1]
    assert event.peer_capabilities == {"tools": {}}
    assert pair.client.state is State.READY
    [initialized] = sent(pair.client)
    assert initialized == {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert pair.server.state is State.INITIALIZING
    [ready] = pair.server.receive(line(initialized), 0)
    assert isinstance(ready, Initialized)
    assert pair.server.state is State.READY
    assert pair.server.peer_info == {"name": "test-client", "version": "1.0"}


@pytest.mark.parametrize("version", HANDSHAKE_VERSIONS)
def test_server_answers_with_the_requested_version_when_it_speaks_it(version: str) -> None:
    pair = make_pair()
    pair.handshake(version)
    assert pair.client.protocol_version == version
    assert pair.server.protocol_version == version


def test_server_answers_its_latest_version_for_an_unknown_one(pair: Pair) -> None:
    pair.server.receive(
        line(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {"protocolVersion": "1999-01-01", "capabilities": {}, "clientInfo": {}},
            }
        ),
        0,
    )
    [reply] = sent(pair.server)
    assert reply["result"]["protocolVersion"] == HANDSHAKE_VERSIONS[-1]


def test_client_gives_up_on_a_version_it_cannot_speak() -> None:
    pair = make_pair(client_versions=("2025-06-18",))
    pair.client.start_initialize(now=0)
    pair.to_server()  # the server speaks 2025-06-18 too, so make it answer something else
    [event] = pair.client.receive(
        line(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "result": {
                    "protocolVersion": "2099-01-01",
                    "capabilities": {},
                    "serverInfo": SERVER_INFO,
                },
            }
        ),
        0,
    )
    assert isinstance(event, InitializeFailed)
    assert isinstance(event.error, UnsupportedProtocolVersion)
    assert "2099-01-01" in str(event.error)
    assert pair.client.state is State.CLOSED


def test_initialize_error_answer_fails_the_handshake(pair: Pair) -> None:
    pair.client.start_initialize(now=0)
    sent(pair.client)
    [event] = pair.client.receive(
        line({"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "nope"}}), 0
    )
    assert isinstance(event, InitializeFailed)
    assert isinstance(event.error, ProtocolError) and event.error.code == -32602


def test_only_ping_before_initialization(pair: Pair) -> None:
    # Neither initialized nor carrying a 2026-07-28 envelope: invalid params, naming both ways.
    events = pair.server.receive(line({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}), 0)
    assert isinstance(events[0], MessageRejected)
    [error] = sent(pair.server)
    assert error["id"] == 1 and error["error"]["code"] == -32602
    assert "initialize" in error["error"]["message"]
    assert "io.modelcontextprotocol/protocolVersion" in error["error"]["message"]
    assert pair.server.receive(line({"jsonrpc": "2.0", "id": 2, "method": "ping"}), 0) == []
    assert sent(pair.server) == [{"jsonrpc": "2.0", "id": 2, "result": {}}]
    with pytest.raises(LocalProtocolViolation):
        pair.client.send_request("tools/list", now=0)
    pair.client.send_request("ping", now=0)  # ping is always allowed


def test_initialize_twice_is_refused(ready: Pair) -> None:
    params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {}}
    ready.server.receive(
        line({"jsonrpc": "2.0", "id": 9, "method": "initialize", "params": params}), 0
    )
    [error] = sent(ready.server)
    assert error["error"]["code"] == -32600


def test_initialize_with_bad_params_gets_invalid_params(pair: Pair) -> None:
    pair.server.receive(
        line({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}), 0
    )
    [error] = sent(pair.server)
    assert error["error"]["code"] == -32602
    assert pair.server.state is State.NEW


def test_server_sends_no_request_but_ping_before_initialized_notification() -> None:
    client = make_pair(
        client_capabilities={"sampling": {}}, server_capabilities={"logging": {}, "tools": {}}
    )
    client.client.start_initialize(now=0)
    client.to_server()
    client.to_client()  # client is ready; the initialized notification is not delivered yet
    with pytest.raises(LocalProtocolViolation):
        client.server.send_request("sampling/createMessage", {}, now=0)
    client.server.send_request("ping", now=0)
    client.server.send_notification("notifications/message", {"level": "info", "data": "x"})


def test_requests_need_the_receivers_capability() -> None:
    pair = make_pair(server_capabilities={})
    pair.handshake()
    with pytest.raises(CapabilityNotDeclared, match="tools"):
        pair.client.send_request("tools/call", {"name": "x"}, now=0)
    with pytest.raises(CapabilityNotDeclared, match="sampling"):
        pair.server.send_request("sampling/createMessage", {}, now=0)
    assert sent(pair.client) == [] and sent(pair.server) == []


def test_declared_capability_allows_the_request() -> None:
    pair = make_pair(client_capabilities={"roots": {"listChanged": True}})
    pair.handshake()
    request_id = pair.server.send_request("roots/list", now=0)
    [event] = pair.to_client()
    assert isinstance(event, RequestReceived) and event.method == "roots/list"
    assert event.id == request_id


def test_undeclared_method_is_method_not_found_for_the_receiver() -> None:
    pair = make_pair(server_capabilities={})
    pair.handshake()
    pair.server.receive(
        line({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "x"}}), 0
    )
    [error] = sent(pair.server)
    assert error["error"]["code"] == -32601


def test_notifications_need_our_own_capability(ready: Pair) -> None:
    with pytest.raises(CapabilityNotDeclared):
        ready.server.send_notification("notifications/prompts/list_changed")
    listed = make_pair(server_capabilities={"tools": {"listChanged": True}})
    listed.handshake()
    listed.server.send_notification("notifications/tools/list_changed")
    assert sent(listed.server)[0]["method"] == "notifications/tools/list_changed"


def test_methods_of_the_wrong_direction_are_refused(ready: Pair) -> None:
    with pytest.raises(LocalProtocolViolation):
        ready.server.send_request("tools/list", now=0)
    with pytest.raises(LocalProtocolViolation):
        ready.client.send_request("initialize", now=0)


def test_only_a_client_starts_the_handshake_and_only_once(pair: Pair) -> None:
    with pytest.raises(LocalProtocolViolation):
        pair.server.start_initialize(now=0)
    pair.client.start_initialize(now=0)
    with pytest.raises(LocalProtocolViolation):
        pair.client.start_initialize(now=0)


def test_initialize_cannot_be_cancelled(pair: Pair) -> None:
    request_id = pair.client.start_initialize(now=0)
    with pytest.raises(LocalProtocolViolation):
        pair.client.cancel(request_id)


def test_server_ignores_cancellation_of_initialize() -> None:
    server = Connection(ConnectionConfig(role="server", info=SERVER_INFO))
    params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {}}
    server.receive(line({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}), 0)
    events = server.receive(
        line({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}), 0
    )
    assert events == []
    [reply] = sent(server)
    assert reply["id"] == 1 and "result" in reply


def test_completion_needs_no_capability_at_2024_11_05_but_does_later() -> None:
    old = make_pair(server_capabilities={"prompts": {}})
    old.handshake("2024-11-05")
    old.client.send_request("completion/complete", {"ref": {}, "argument": {}}, now=0)
    [event] = old.to_server()
    assert isinstance(event, RequestReceived)
    new = make_pair(server_capabilities={"prompts": {}})
    new.handshake("2025-03-26")
    with pytest.raises(CapabilityNotDeclared, match="completions"):
        new.client.send_request("completion/complete", {"ref": {}, "argument": {}}, now=0)


@pytest.mark.parametrize(
    ("params", "problem"),
    [
        (None, "needs params"),
        ({}, "protocolVersion"),
        ({"protocolVersion": 2025}, "protocolVersion"),
        ({"protocolVersion": "2025-11-25", "capabilities": []}, "capabilities"),
        ({"protocolVersion": "2025-11-25", "capabilities": {}}, "clientInfo"),
        ({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": "me"}, "clientInfo"),
    ],
)
def test_malformed_initialize_params_are_named(params: dict | None, problem: str) -> None:
    found = check_initialize_params(params)
    assert found is not None and problem in found
    good = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c"}}
    assert check_initialize_params(good) is None


@pytest.mark.parametrize(
    ("result", "problem"),
    [
        ({}, "protocolVersion"),
        ({"protocolVersion": "2025-11-25"}, "capabilities"),
        ({"protocolVersion": "2025-11-25", "capabilities": {}}, "serverInfo"),
        ({"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": []}, "serverInfo"),
    ],
)
def test_malformed_initialize_results_are_named(result: dict, problem: str) -> None:
    found = check_initialize_result(result)
    assert found is not None and problem in found
    good = {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "s"}}
    assert check_initialize_result(good) is None


def test_initialize_never_offers_extensions() -> None:
    """Extensions are declared per request at 2026-07-28, never in a handshake."""
    params = initialize_params("2025-11-25", {"roots": {}, "extensions": {"x": {}}}, {})
    assert params["capabilities"] == {"roots": {}}
    assert initialize_params("2025-11-25", {"roots": {}}, {})["capabilities"] == {"roots": {}}
