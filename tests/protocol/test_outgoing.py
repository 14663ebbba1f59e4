"""What the core tells a transport about each message it queues (`Outgoing`), so that no
transport has to sniff or re-parse bytes: the request it belongs to, whether it is that
request's answer, its error code, the revision an initialize agreed, and for our own requests
their method, id and params."""

from __future__ import annotations

import orjson
from hypothesis import given
from hypothesis import strategies as st

from mcpkit.protocol import Connection, ConnectionConfig
from mcpkit.protocol.http import per_request_status
from mcpkit.protocol.jsonrpc import encode_request
from tests.protocol.conftest import CLIENT_INFO, Pair, line, make_pair

ids = st.one_of(st.integers(min_value=-(2**53), max_value=2**53), st.text(max_size=20))


def initialized_server() -> Connection:
    pair = make_pair(client_capabilities={"sampling": {}})
    pair.handshake()
    return pair.server


@given(ids)
def test_the_answer_is_final_and_names_its_request_while_our_request_with_that_id_is_not(
    request_id: int | str,
) -> None:
    server = initialized_server()
    server.receive(encode_request(request_id, "tools/list", None), 0)
    ours = server.send_request(
        "sampling/createMessage", {"messages": [], "maxTokens": 1}, now=0, related_id=request_id
    )
    server.send_result(request_id, {"tools": []})
    asked, answered = server.data_to_send()
    assert (asked.final, asked.related, asked.id, asked.method) == (
        False,
        request_id,
        ours,
        "sampling/createMessage",
    )
    assert asked.params == {"messages": [], "maxTokens": 1}
    assert (answered.final, answered.related, answered.code) == (True, request_id, None)
    assert orjson.loads(answered.data)["id"] == request_id


def test_the_client_tells_the_revision_it_confirms() -> None:
    pair = make_pair()
    pair.client.start_initialize(now=0, version="2025-06-18")
    pair.to_server()
    pair.to_client()
    [initialized] = pair.client.data_to_send()
    assert (initialized.method, initialized.version, initialized.id) == (
        "notifications/initialized",
        "2025-06-18",
        None,
    )


def test_error_answers_carry_their_code() -> None:
    server = initialized_server()
    server.receive(encode_request(5, "nope/nope", None), 0)
    server.receive(encode_request(6, "tools/list", None), 0)
    server.send_error(6, -32602, "bad")
    unknown, refused = server.data_to_send()
    assert (unknown.final, unknown.related, unknown.code) == (True, 5, -32601)
    assert (refused.final, refused.related, refused.code) == (True, 6, -32602)


def test_the_initialize_answer_carries_the_revision_agreed() -> None:
    server = Connection(ConnectionConfig(role="server", info={"name": "s", "version": "1"}))
    params = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": CLIENT_INFO}
    server.receive(line({"jsonrpc": "2.0", "id": "i", "method": "initialize", "params": params}), 0)
    [agreed] = server.data_to_send()
    assert (agreed.final, agreed.related, agreed.version) == (True, "i", "2025-06-18")
    broken = Connection(ConnectionConfig(role="server", info={"name": "s", "version": "1"}))
    broken.receive(line({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}), 0)
    [failed] = broken.data_to_send()
    assert (failed.final, failed.version, failed.code) == (True, None, -32602)


def test_a_batch_answer_is_final_for_its_first_request() -> None:
    pair: Pair = make_pair()
    pair.handshake("2025-03-26")
    pair.server.receive(
        b'[{"jsonrpc":"2.0","id":"a","method":"ping"},{"jsonrpc":"2.0","id":"b","method":"ping"}]',
        0,
    )
    [batch] = pair.server.data_to_send()
    assert batch.final and batch.related == "a"
    assert [item["id"] for item in orjson.loads(batch.data)] == ["a", "b"]


def test_a_modern_answer_gets_the_status_its_code_calls_for() -> None:
    server = Connection(
        ConnectionConfig(role="server", info={"name": "s", "version": "1"}, capabilities={})
    )
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    server.receive(
        line({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}}), 0
    )
    server.receive(
        line({"jsonrpc": "2.0", "id": 2, "method": "server/discover", "params": {"_meta": meta}}), 0
    )
    not_found, discovered = server.data_to_send()
    assert not_found.code == -32601 and per_request_status(not_found) == 404
    assert discovered.code is None and per_request_status(discovered) == 200


def test_our_modern_requests_carry_their_revision() -> None:
    client = Connection(ConnectionConfig(role="client", info=CLIENT_INFO))
    client.use_per_request("2026-07-28")
    client.send_request("tools/list", now=0)
    [sent] = client.data_to_send()
    assert (sent.version, sent.method, sent.id, sent.final) == (
        "2026-07-28",
        "tools/list",
        1,
        False,
    )
    assert sent.params is not None and "_meta" in sent.params
