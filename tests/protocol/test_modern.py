"""Revision 2026-07-28 in the sans-IO core: per-request envelopes, discovery, stamped results."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit.errors import LocalProtocolViolation
from mcpkit.protocol import MessageRejected, Prepared, RequestReceived, State
from mcpkit.protocol.per_request import (
    CLIENT_CAPABILITIES,
    CLIENT_INFO,
    LOG_LEVEL,
    PROTOCOL_VERSION,
    SERVER_INFO,
    CacheHint,
    ResultStamp,
    is_per_request,
)
from mcpkit.types.versions import HANDSHAKE_VERSIONS

from .conftest import CLIENT_INFO as OUR_CLIENT_INFO
from .conftest import SERVER_INFO as OUR_SERVER_INFO
from .conftest import Pair, line, make_pair, sent

MODERN = "2026-07-28"


def envelope(**extra: Any) -> dict[str, Any]:
    return {PROTOCOL_VERSION: MODERN, CLIENT_CAPABILITIES: {}, **extra}


def request(request_id: int, method: str, params: dict[str, Any] | None = None) -> bytes:
    params = dict(params or {})
    params.setdefault("_meta", envelope())
    return line({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})


def test_modern_request_is_served_without_a_handshake(pair: Pair) -> None:
    meta = envelope(
        **{CLIENT_INFO: {"name": "c", "version": "1"}, LOG_LEVEL: "info", "traceparent": "00-x"}
    )
    [event] = pair.server.receive(request(1, "tools/list", {"_meta": meta}), 0)
    assert isinstance(event, RequestReceived) and event.method == "tools/list"
    assert event.envelope is not None
    assert event.envelope.version == MODERN
    assert event.envelope.client_info == {"name": "c", "version": "1"}
    assert event.envelope.log_level == "info"
    assert event.envelope.trace == {"traceparent": "00-x"}
    assert pair.server.state is State.NEW  # no session: the next request stands alone too
    pair.server.send_result(1, {"tools": []})
    [answer] = sent(pair.server)
    result = answer["result"]
    assert result["resultType"] == "complete"
    assert result["_meta"][SERVER_INFO] == OUR_SERVER_INFO
    assert result["ttlMs"] == 60_000 and result["cacheScope"] == "public"


@pytest.mark.parametrize(
    ("meta", "code", "needle"),
    [
        ({CLIENT_CAPABILITIES: {}, PROTOCOL_VERSION: 20260728}, -32602, "protocolVersion"),
        ({PROTOCOL_VERSION: MODERN}, -32602, "clientCapabilities"),
        ({PROTOCOL_VERSION: MODERN, CLIENT_CAPABILITIES: []}, -32602, "clientCapabilities"),
        (envelope(**{LOG_LEVEL: "loud"}), -32602, "logLevel"),
        (envelope(**{CLIENT_INFO: "me"}), -32602, "clientInfo"),
    ],
)
def test_a_malformed_envelope_is_invalid_params(
    pair: Pair, meta: dict[str, Any], code: int, needle: str
) -> None:
    [event] = pair.server.receive(request(1, "tools/list", {"_meta": meta}), 0)
    assert isinstance(event, MessageRejected)
    [answer] = sent(pair.server)
    assert answer["id"] == 1 and answer["error"]["code"] == code
    assert needle in answer["error"]["message"]


@pytest.mark.parametrize("version", ["1900-01-01", "2025-11-25"])
def test_an_unsupported_version_lists_every_version_we_speak(pair: Pair, version: str) -> None:
    meta = envelope(**{PROTOCOL_VERSION: version})
    pair.server.receive(request(7, "tools/list", {"_meta": meta}), 0)
    [answer] = sent(pair.server)
    error = answer["error"]
    assert error["code"] == -32022
    assert error["data"]["requested"] == version
    assert error["data"]["supported"] == [MODERN, *reversed(HANDSHAKE_VERSIONS)]


@pytest.mark.parametrize("method", ["ping", "logging/setLevel", "resources/subscribe", "nope"])
def test_methods_of_the_handshake_era_do_not_exist_per_request(pair: Pair, method: str) -> None:
    pair.server.receive(request(3, method), 0)
    [answer] = sent(pair.server)
    assert answer["error"]["code"] == -32601


def test_a_method_whose_capability_the_server_lacks_is_not_found() -> None:
    pair = make_pair(server_capabilities={"tools": {}})
    pair.server.receive(request(1, "prompts/list"), 0)
    [answer] = sent(pair.server)
    assert answer["error"]["code"] == -32601


def test_server_discover_is_answered_by_the_core(pair: Pair) -> None:
    assert pair.server.receive(request("d", "server/discover"), 0) == []
    [answer] = sent(pair.server)
    result = answer["result"]
    assert result["supportedVersions"][0] == MODERN
    assert set(HANDSHAKE_VERSIONS) <= set(result["supportedVersions"])
    assert result["capabilities"] == {"tools": {}}
    assert result["instructions"] == "be nice"
    assert result["resultType"] == "complete"
    assert result["_meta"][SERVER_INFO] == OUR_SERVER_INFO
    assert result["ttlMs"] >= 0 and result["cacheScope"] in ("public", "private")


def test_both_eras_on_one_connection(pair: Pair) -> None:
    pair.handshake()
    [event] = pair.server.receive(request(50, "tools/list"), 0)
    assert isinstance(event, RequestReceived) and event.envelope is not None
    pair.server.send_result(50, {"tools": []})
    [modern] = sent(pair.server)
    assert modern["result"]["resultType"] == "complete"
    # A handshake-era request on the same connection is answered the old way.
    pair.client.send_request("tools/list", now=0)
    [legacy_event] = pair.to_server()
    assert isinstance(legacy_event, RequestReceived) and legacy_event.envelope is None
    pair.server.send_result(legacy_event.id, {"tools": []})
    [legacy] = sent(pair.server)
    assert "resultType" not in legacy["result"]


def test_a_request_with_neither_envelope_nor_handshake_is_invalid_params(pair: Pair) -> None:
    pair.server.receive(line({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}), 0)
    [answer] = sent(pair.server)
    assert answer["error"]["code"] == -32602


def test_input_required_results_carry_no_cache_hints() -> None:
    pair = make_pair(server_capabilities={"resources": {}})
    pair.server.receive(request(1, "resources/read", {"uri": "x:/"}), 0)
    pair.server.send_result(1, {"resultType": "input_required", "requestState": "s"})
    [answer] = sent(pair.server)
    assert answer["result"]["resultType"] == "input_required"
    assert "ttlMs" not in answer["result"] and "cacheScope" not in answer["result"]


def test_prepared_results_are_stamped_by_splicing(pair: Pair) -> None:
    pair.server.receive(request(1, "tools/list"), 0)
    pair.server.send_result(1, Prepared({"tools": [{"name": "a"}], "nextCursor": "c"}))
    [answer] = sent(pair.server)
    assert answer["result"] == {
        "resultType": "complete",
        "ttlMs": 60_000,
        "cacheScope": "public",
        "_meta": {SERVER_INFO: OUR_SERVER_INFO},
        "tools": [{"name": "a"}],
        "nextCursor": "c",
    }


def test_stamp_merges_an_existing_meta_and_keeps_the_handlers_fields() -> None:
    stamp = ResultStamp({"name": "s"}, {"resources/read": CacheHint(5, "private")})
    result = stamp.result("resources/read", {"contents": [], "_meta": {"k": 1}, "ttlMs": 9})
    assert result == {
        "contents": [],
        "_meta": {SERVER_INFO: {"name": "s"}, "k": 1},
        "ttlMs": 9,
        "cacheScope": "private",
        "resultType": "complete",
    }
    spliced = stamp.prepared("resources/read", Prepared({"contents": [], "_meta": {"k": 1}}))
    assert b'"k":1' in spliced.json and b'"cacheScope":"private"' in spliced.json
    assert stamp.prepared("resources/read", Prepared({})).json.endswith(b"}")


def test_cache_hints_are_validated() -> None:
    with pytest.raises(ValueError, match="ttl_ms"):
        CacheHint(-1)
    with pytest.raises(ValueError, match="scope"):
        CacheHint(1, "shared")


def test_notifications_related_to_a_modern_request_flow_before_any_handshake() -> None:
    pair = make_pair(server_capabilities={"tools": {}, "logging": {}})
    pair.server.receive(
        request(4, "tools/call", {"name": "t", "_meta": envelope(progressToken=9)}), 0
    )
    assert pair.server.send_progress(4, 0.5)
    pair.server.send_notification(
        "notifications/message", {"level": "info", "data": 1}, related_id=4
    )
    progress, log = pair.server.data_to_send()
    assert progress.related == 4 and log.related == 4
    assert not progress.final and not log.final
    with pytest.raises(LocalProtocolViolation):
        pair.server.send_notification("notifications/roots/list_changed", related_id=4)


def test_client_modern_mode_stamps_every_request(pair: Pair) -> None:
    pair.client.use_per_request(MODERN)
    assert pair.client.per_request and pair.client.state is State.READY
    pair.client.send_request("tools/call", {"name": "t", "_meta": {"progressToken": "p"}}, now=0)
    [message] = sent(pair.client)
    meta = message["params"]["_meta"]
    assert meta[PROTOCOL_VERSION] == MODERN
    assert meta[CLIENT_CAPABILITIES] == {}
    assert meta[CLIENT_INFO] == OUR_CLIENT_INFO
    assert meta["progressToken"] == "p"
    assert is_per_request(message["params"])
    with pytest.raises(LocalProtocolViolation):
        pair.client.send_request("ping", now=0)
    with pytest.raises(LocalProtocolViolation):
        pair.client.send_request("logging/setLevel", {"level": "info"}, now=0)


def test_client_modern_end_to_end_then_back_to_the_handshake(pair: Pair) -> None:
    pair.client.use_per_request(MODERN)
    probe = pair.client.send_request("server/discover", now=0)
    pair.to_server()
    [answer] = pair.to_client()
    assert answer.id == probe  # type: ignore[union-attr]
    discovered = answer.result  # type: ignore[union-attr]
    pair.client.use_per_request(MODERN, discovered)
    assert pair.client.peer_capabilities == {"tools": {}}
    assert pair.client.peer_info == OUR_SERVER_INFO
    assert pair.client.instructions == "be nice"
    pair.client.use_handshake()
    assert not pair.client.per_request and pair.client.state is State.NEW
    pair.handshake()
    assert pair.client.protocol_version == HANDSHAKE_VERSIONS[-1]


def test_use_per_request_refuses_what_it_cannot_do(pair: Pair) -> None:
    with pytest.raises(LocalProtocolViolation):
        pair.server.use_per_request(MODERN)
    with pytest.raises(LocalProtocolViolation):
        pair.client.use_per_request("2025-11-25")
    with pytest.raises(LocalProtocolViolation):
        pair.client.use_handshake()


def test_the_old_spellings_still_answer_with_a_warning(pair: Pair) -> None:
    # Issue 23: eras named by mechanism; `modern` / `use_modern` go after one release.
    with pytest.warns(DeprecationWarning, match="use Connection.use_per_request") as seen:
        pair.client.use_modern(MODERN)
    assert seen[0].filename == __file__
    with pytest.warns(DeprecationWarning, match="use Connection.per_request"):
        assert pair.client.modern is True
    with pytest.warns(DeprecationWarning, match="use per_request"):
        assert pair.client.config.modern == pair.client.config.per_request == (MODERN,)


def test_the_module_under_its_old_name_still_answers_with_a_warning() -> None:
    from mcpkit.protocol import modern, per_request

    with pytest.warns(DeprecationWarning, match="per_request.DEFAULT_CACHE_HINTS") as seen:
        assert modern.DEFAULT_CACHE_HINTS is per_request.DEFAULT_CACHE_HINTS
    assert seen[0].filename == __file__
    with pytest.warns(DeprecationWarning, match="per_request.is_per_request"):
        assert modern.is_modern is per_request.is_per_request
    with pytest.raises(AttributeError):
        modern.no_such_name  # noqa: B018
