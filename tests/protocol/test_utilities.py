"""Ping, cancellation, progress, timeouts and batches in the sans-IO core."""

from __future__ import annotations

import pytest

from mcpkit.errors import LocalProtocolViolation
from mcpkit.protocol import (
    ProgressReceived,
    RequestCancelled,
    RequestReceived,
    RequestTimedOut,
    ResponseReceived,
    Timeout,
)

from .conftest import Pair, line, make_pair, sent


def test_ping_both_ways(ready: Pair) -> None:
    client_ping = ready.client.send_request("ping", now=0)
    assert ready.to_server() == []  # answered by the core itself
    [pong] = ready.to_client()
    assert isinstance(pong, ResponseReceived) and pong.id == client_ping and pong.result == {}
    server_ping = ready.server.send_request("ping", now=0)
    assert ready.to_client() == []
    [pong] = ready.to_server()
    assert isinstance(pong, ResponseReceived) and pong.id == server_ping


def test_cancelled_request_gets_no_response(ready: Pair) -> None:
    request_id = ready.client.send_request("tools/list", now=0)
    [received] = ready.to_server()
    assert ready.client.cancel(request_id, "changed my mind")
    [cancelled] = ready.to_server()
    assert isinstance(cancelled, RequestCancelled)
    assert cancelled.id == received.id and cancelled.reason == "changed my mind"
    assert not ready.server.send_result(received.id, {"tools": []})
    assert sent(ready.server) == []
    assert ready.server.requests_in_flight == 0


def test_late_response_to_a_cancelled_request_is_ignored(ready: Pair) -> None:
    request_id = ready.client.send_request("tools/list", now=0)
    ready.to_server()
    ready.client.cancel(request_id)
    sent(ready.client)  # the cancellation is lost in transit
    ready.server.send_result(request_id, {"tools": []})
    assert ready.to_client() == []
    assert ready.client.requests_pending == 0


def test_cancellations_for_unknown_or_malformed_requests_are_ignored(ready: Pair) -> None:
    for params in ({"requestId": 12345}, {"requestId": None}, {}, {"requestId": [1]}):
        events = ready.server.receive(
            line({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}), 0
        )
        assert events == []
    assert sent(ready.server) == []


def test_cancel_after_the_answer_is_a_no_op(ready: Pair) -> None:
    request_id = ready.client.send_request("tools/list", now=0)
    ready.to_server()
    ready.server.send_result(request_id, {"tools": []})
    ready.to_client()
    assert not ready.client.cancel(request_id)
    assert sent(ready.client) == []


def test_progress_flows_to_the_requester(ready: Pair) -> None:
    request_id = ready.client.send_request("tools/call", {"name": "slow"}, now=0, progress=True)
    [received] = ready.to_server()
    assert isinstance(received, RequestReceived)
    assert received.progress_token is not None
    assert received.params is not None and received.params["name"] == "slow"
    assert ready.server.send_progress(received.id, 1, total=3, message="one")
    assert ready.server.send_progress(received.id, 2.5, total=3)
    events = ready.to_client()
    assert [(e.request_id, e.progress, e.total, e.message) for e in events] == [  # type: ignore[union-attr]
        (request_id, 1, 3, "one"),
        (request_id, 2.5, 3, None),
    ]
    assert all(isinstance(e, ProgressReceived) for e in events)


def test_progress_must_increase(ready: Pair) -> None:
    ready.client.send_request("tools/call", {"name": "x"}, now=0, progress=True)
    [received] = ready.to_server()
    ready.server.send_progress(received.id, 5)
    with pytest.raises(LocalProtocolViolation):
        ready.server.send_progress(received.id, 5)
    token = received.progress_token
    # A peer sending a stale value: dropped.
    ready.to_client()
    stale = {"progressToken": token, "progress": 1}
    assert (
        ready.client.receive(
            line({"jsonrpc": "2.0", "method": "notifications/progress", "params": stale}), 0
        )
        == []
    )


def test_no_progress_without_a_token_or_after_the_answer(ready: Pair) -> None:
    ready.client.send_request("tools/list", now=0)
    [received] = ready.to_server()
    assert not ready.server.send_progress(received.id, 1)
    ready.client.send_request("tools/call", {"name": "x"}, now=0, progress=True)
    [with_token] = ready.to_server()
    ready.server.send_result(with_token.id, {"content": []})
    assert not ready.server.send_progress(with_token.id, 1)


def test_progress_message_is_left_out_at_2024_11_05() -> None:
    pair = make_pair()
    pair.handshake("2024-11-05")
    pair.client.send_request("tools/call", {"name": "x"}, now=0, progress=True)
    [received] = pair.to_server()
    pair.server.send_progress(received.id, 1, message="not in this revision")
    [notification] = sent(pair.server)
    assert "message" not in notification["params"]


def test_timeout_cancels_the_request(ready: Pair) -> None:
    request_id = ready.client.send_request("tools/list", now=10, timeout=Timeout(5))
    ready.to_server()
    assert ready.client.next_deadline() == 15
    assert ready.client.expire(14.9) == []
    [timed_out] = ready.client.expire(15)
    assert isinstance(timed_out, RequestTimedOut)
    assert timed_out.id == request_id and timed_out.timeout == 5
    [cancel] = sent(ready.client)
    assert cancel["method"] == "notifications/cancelled"
    assert cancel["params"]["requestId"] == request_id
    assert ready.client.next_deadline() is None


def test_progress_resets_the_timeout_up_to_the_maximum(ready: Pair) -> None:
    limit = Timeout(5, reset_on_progress=True, maximum=12)
    ready.client.send_request("tools/call", {"name": "x"}, now=0, timeout=limit, progress=True)
    [received] = ready.to_server()
    ready.now = 4
    ready.server.send_progress(received.id, 1)
    ready.to_client()
    assert ready.client.next_deadline() == 9
    ready.now = 8
    ready.server.send_progress(received.id, 2)
    ready.to_client()
    assert ready.client.next_deadline() == 12  # capped by the maximum
    assert ready.client.expire(11.9) == []
    [timed_out] = ready.client.expire(12)
    assert isinstance(timed_out, RequestTimedOut)


def test_progress_does_not_reset_unless_asked(ready: Pair) -> None:
    ready.client.send_request("tools/call", {"name": "x"}, now=0, timeout=Timeout(5), progress=True)
    [received] = ready.to_server()
    ready.now = 4
    ready.server.send_progress(received.id, 1)
    ready.to_client()
    assert ready.client.next_deadline() == 5


def test_answered_request_leaves_no_deadline(ready: Pair) -> None:
    request_id = ready.client.send_request("tools/list", now=0, timeout=Timeout(5))
    ready.to_server()
    ready.server.send_result(request_id, {"tools": []})
    ready.to_client()
    assert ready.client.next_deadline() is None
    assert ready.client.expire(100) == []


def test_initialize_timeout_fails_the_handshake(pair: Pair) -> None:
    pair.client.start_initialize(now=0, timeout=Timeout(3))
    [event] = pair.client.expire(3)
    assert type(event).__name__ == "InitializeFailed"


# -- batches ---------------------------------------------------------------------------------


def test_batch_is_answered_as_one_array_at_2025_03_26() -> None:
    pair = make_pair()
    pair.handshake("2025-03-26")
    batch = (
        b'[{"jsonrpc":"2.0","id":1,"method":"tools/list"},'
        b'{"jsonrpc":"2.0","id":2,"method":"ping"},'
        b'{"jsonrpc":"2.0","method":"notifications/roots/list_changed"},'
        b'{"jsonrpc":"2.0","id":3,"method":"nope"},'
        b'{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"x"}}]'
    )
    events = pair.server.receive(batch, 0)
    requests = [e for e in events if isinstance(e, RequestReceived)]
    assert [r.id for r in requests] == [1, 4]
    assert sent(pair.server) == []  # held until every request in the batch is answered
    pair.server.send_result(4, {"content": []})
    assert sent(pair.server) == []
    pair.server.send_result(1, {"tools": []})
    [answer] = sent(pair.server)
    assert isinstance(answer, list)
    by_id = {item["id"]: item for item in answer}
    assert set(by_id) == {1, 2, 3, 4}
    assert by_id[2]["result"] == {} and by_id[3]["error"]["code"] == -32601


def test_batch_of_notifications_gets_no_answer() -> None:
    pair = make_pair()
    pair.handshake("2025-03-26")
    pair.server.receive(b'[{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}]', 0)
    assert sent(pair.server) == []


def test_cancelled_request_in_a_batch_is_left_out() -> None:
    pair = make_pair()
    pair.handshake("2025-03-26")
    pair.server.receive(
        b'[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"ping"}]',
        0,
    )
    pair.server.receive(
        line({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}), 0
    )
    [answer] = sent(pair.server)
    assert answer == [{"jsonrpc": "2.0", "id": 2, "result": {}}]


def test_initialize_is_never_accepted_in_a_batch() -> None:
    pair = make_pair()
    pair.handshake("2025-03-26")
    params = {"protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {}}
    pair.server.receive(
        line([{"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": params}]),  # type: ignore[arg-type]
        0,
    )
    [answer] = sent(pair.server)
    assert answer[0]["id"] == 7 and answer[0]["error"]["code"] == -32600


@pytest.mark.parametrize("version", ["2024-11-05", "2025-06-18", "2025-11-25", None])
def test_batches_are_rejected_at_other_revisions(version: str | None) -> None:
    pair = make_pair()
    if version is not None:
        pair.handshake(version)
    pair.server.receive(b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]', 0)
    [answer] = sent(pair.server)
    assert answer["id"] is None and answer["error"]["code"] == -32600
    assert pair.server.requests_in_flight == 0


def test_batch_answer_is_related_to_its_first_request() -> None:
    # HTTP routes the array to the POST that carried the batch, keyed by its first request.
    pair = make_pair()
    pair.handshake("2025-03-26")
    pair.server.receive(
        b'[{"jsonrpc":"2.0","method":"notifications/roots/list_changed"},'
        b'{"jsonrpc":"2.0","id":"a","method":"ping"},{"jsonrpc":"2.0","id":9,"method":"ping"}]',
        0,
    )
    [out] = pair.server.data_to_send()
    assert out.data.startswith(b"[") and out.related == "a" and out.final
