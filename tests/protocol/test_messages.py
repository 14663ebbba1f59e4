"""JSON-RPC framing: the specified error for each kind of bad message, and nothing disturbed."""

from __future__ import annotations

import pytest

from mcpkit.protocol import MessageRejected, RequestReceived

from .conftest import Pair, line, make_pair, sent


@pytest.mark.parametrize(
    ("data", "code", "reply_id"),
    [
        (b"this is not json", -32700, None),
        (b'{"jsonrpc": "2.0", "id": 1, "method": ', -32700, None),
        (b"42", -32600, None),
        (b'"a string"', -32600, None),
        (b"[]", -32600, None),
        (b'{"jsonrpc": "1.0", "id": 3, "method": "ping"}', -32600, 3),
        (b'{"id": 3, "method": "ping"}', -32600, 3),
        (b'{"jsonrpc": "2.0", "id": null, "method": "ping"}', -32600, None),
        (b'{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}', -32600, None),
        (b'{"jsonrpc": "2.0", "id": true, "method": "ping"}', -32600, None),
        (b'{"jsonrpc": "2.0", "id": 4, "method": 7}', -32600, 4),
        (b'{"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": "x"}', -32600, 5),
        (b'{"jsonrpc": "2.0", "id": 6, "method": "tools/list", "params": [1]}', -32602, 6),
        (b'{"jsonrpc": "2.0", "id": 7}', -32600, 7),
        (b'{"jsonrpc": "2.0", "id": 8, "method": "no/such/method"}', -32601, 8),
    ],
)
def test_bad_messages_get_the_specified_error(
    ready: Pair, data: bytes, code: int, reply_id: object
) -> None:
    events = ready.server.receive(data, 0)
    assert [type(e) for e in events] == [MessageRejected]
    [reply] = sent(ready.server)
    assert reply["jsonrpc"] == "2.0"
    assert reply["id"] == reply_id
    assert reply["error"]["code"] == code
    assert reply["error"]["message"]


@pytest.mark.parametrize(
    "data",
    [
        b'{"jsonrpc": "2.0", "id": 99, "result": {}}',  # answer to nothing we asked
        b'{"jsonrpc": "2.0", "id": 1, "result": 5}',  # result not an object
        b'{"jsonrpc": "2.0", "id": 1, "error": "boom"}',
        b'{"jsonrpc": "2.0", "method": 12}',  # a notification we cannot even read
    ],
)
def test_bad_responses_and_notifications_get_no_answer(ready: Pair, data: bytes) -> None:
    ready.server.receive(data, 0)
    assert [m for m in sent(ready.server) if "id" in m and m["id"] is not None] == []


def test_error_without_id_from_peer_is_reported_not_fatal(ready: Pair) -> None:
    [event] = ready.client.receive(
        line({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}), 0
    )
    assert isinstance(event, MessageRejected) and event.code == -32700


def test_garbage_does_not_disturb_requests_in_flight(ready: Pair) -> None:
    ready.client.send_request("tools/list", now=0)
    [event] = ready.to_server()
    assert isinstance(event, RequestReceived)
    for junk in (b"\xff\xfe garbage", b"{}", b"[1,2]", b'{"jsonrpc":"2.0"}'):
        ready.server.receive(junk, 0)
    errors = sent(ready.server)
    assert all("error" in e for e in errors)
    assert ready.server.requests_in_flight == 1
    assert ready.server.send_result(event.id, {"tools": []})
    [response] = ready.to_client()
    assert type(response).__name__ == "ResponseReceived"


def test_duplicate_id_in_flight_is_refused_and_the_original_survives(ready: Pair) -> None:
    request = {"jsonrpc": "2.0", "id": "a", "method": "tools/list"}
    [first] = ready.server.receive(line(request), 0)
    assert isinstance(first, RequestReceived)
    [rejected] = ready.server.receive(line(request), 0)
    assert isinstance(rejected, MessageRejected) and rejected.code == -32600
    sent(ready.server)
    assert ready.server.send_result("a", {"tools": []})
    assert sent(ready.server) == [{"jsonrpc": "2.0", "id": "a", "result": {"tools": []}}]


def test_string_and_integer_ids_are_echoed_exactly(ready: Pair) -> None:
    for request_id in ("abc", 0, -5, 2**53 + 1):
        [event] = ready.server.receive(
            line({"jsonrpc": "2.0", "id": request_id, "method": "tools/list"}), 0
        )
        assert isinstance(event, RequestReceived)
        ready.server.send_result(event.id, {"tools": []})
        [reply] = sent(ready.server)
        assert reply["id"] == request_id and type(reply["id"]) is type(request_id)


def test_outgoing_ids_are_unique_and_never_null(ready: Pair) -> None:
    ids = {ready.client.send_request("ping", now=0) for _ in range(100)}
    assert len(ids) == 100 and None not in ids


def test_unserializable_result_becomes_internal_error(ready: Pair) -> None:
    [event] = ready.server.receive(line({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}), 0)
    ready.server.send_result(event.id, {"tools": {object()}})  # type: ignore[dict-item]
    [reply] = sent(ready.server)
    assert reply["id"] == 1 and reply["error"]["code"] == -32603


def test_answering_twice_sends_once(ready: Pair) -> None:
    ready.server.receive(line({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}), 0)
    assert ready.server.send_result(1, {"tools": []})
    assert not ready.server.send_error(1, -32603, "again")
    assert len(sent(ready.server)) == 1


def test_closed_connection_ignores_input_and_returns_pending() -> None:
    pair = make_pair()
    pair.handshake()
    first = pair.client.send_request("tools/list", now=0)
    second = pair.client.send_request("ping", now=0)
    pending = pair.client.connection_lost()
    assert sorted(pending) == sorted([(first, "tools/list"), (second, "ping")])
    assert pair.client.receive(b'{"jsonrpc":"2.0","id":1,"result":{}}', 0) == []


def test_broken_responses_are_not_answered_but_broken_requests_are(ready: Pair) -> None:
    ready.server.receive(b'{"hello": "world"}', 0)
    ready.server.receive(b'{"jsonrpc": "1.0", "id": 3, "result": {}}', 0)
    assert [(m["id"], m["error"]["code"]) for m in sent(ready.server)] == [(None, -32600)]


def test_prepared_result_is_spliced_verbatim(ready: Pair) -> None:
    from mcpkit.protocol import Prepared

    prepared = Prepared({"tools": [{"name": "a"}]})
    for request_id in ("x", 7):
        ready.server.receive(line({"jsonrpc": "2.0", "id": request_id, "method": "tools/list"}), 0)
        ready.server.send_result(request_id, prepared)
        [reply] = sent(ready.server)
        assert reply == {"jsonrpc": "2.0", "id": request_id, "result": {"tools": [{"name": "a"}]}}
