"""The Streamable HTTP rules as pure functions: no event loop, no sockets."""

from __future__ import annotations

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpkit.errors import INVALID_REQUEST, SERVER_ERROR
from mcpkit.protocol.http import (
    Body,
    Refusal,
    accepts,
    check_batch,
    check_content_length,
    check_get_headers,
    check_post_headers,
    check_protocol_version,
    event_id,
    event_sequence,
    event_stream,
    forbidden_origin,
    host_allowed,
    inspect_body,
    is_loopback,
    local_hosts,
    local_origins,
    method_not_allowed,
    misdirected_host,
    origin_allowed,
    session_not_found,
    session_required,
    valid_session_id,
)
from mcpkit.protocol.jsonrpc import encode_notification, encode_request, encode_result


@pytest.mark.parametrize(
    ("accept", "content_type", "status"),
    [
        ("application/json, text/event-stream", "application/json", None),
        ("text/event-stream;q=0.9, application/json", "application/json; charset=utf-8", None),
        ("*/*", "application/json", None),
        ("application/json", "application/json", 406),
        ("text/event-stream", "application/json", 406),
        (None, "application/json", 406),
        ("application/json, text/event-stream", "text/plain", 415),
        ("application/json, text/event-stream", None, 415),
    ],
)
def test_post_headers(accept: str | None, content_type: str | None, status: int | None) -> None:
    refused = check_post_headers(accept, content_type)
    assert (refused.status if refused else None) == status


def test_get_needs_sse_and_wildcards_count() -> None:
    assert check_get_headers("text/event-stream") is None
    assert check_get_headers("text/*") is None
    assert check_get_headers("application/json").status == 406  # type: ignore[union-attr]
    assert accepts("Application/JSON", "application/json")


def test_protocol_version_header() -> None:
    assert check_protocol_version(None) == ("2025-03-26", None)
    assert check_protocol_version("2025-06-18") == ("2025-06-18", None)
    _version, refused = check_protocol_version("1999-01-01")
    assert refused is not None and refused.status == 400
    error = orjson.loads(refused.body)
    assert error["id"] is None and "1999-01-01" in error["error"]["message"]


def test_content_length() -> None:
    assert check_content_length(None, 10) is None
    assert check_content_length("10", 10) is None
    assert check_content_length("11", 10).status == 413  # type: ignore[union-attr]
    assert check_content_length("x", 10).status == 400  # type: ignore[union-attr]


def test_session_ids_are_visible_ascii() -> None:
    assert valid_session_id("abc-DEF_123~!")
    assert not valid_session_id("")
    assert not valid_session_id("has space")
    assert not valid_session_id("caf\u00e9")


@pytest.mark.parametrize(
    ("host", "allowed"),
    [
        ("127.0.0.1:8000", True),
        ("localhost", True),
        ("[::1]:9", True),
        ("LOCALHOST:80", True),
        ("evil.example", False),
        ("localhost.evil.example:80", False),
        (None, False),
        # not hosts at all: userinfo, a second host, a path, spaces, a non-numeric port
        ("localhost:8000@evil.example", False),
        ("localhost@evil.example", False),
        ("127.0.0.1:80/evil", False),
        ("localhost evil.example", False),
        ("localhost:http", False),
        ("localhost:123456", False),
    ],
)
def test_host_allow_list(host: str | None, allowed: bool) -> None:
    assert host_allowed(host, local_hosts()) is allowed


def test_host_with_a_fixed_port() -> None:
    assert host_allowed("mcp.example:443", ("mcp.example:443",))
    assert not host_allowed("mcp.example:444", ("mcp.example:443",))
    assert host_allowed("mcp.example:444", ("mcp.example",))


def test_origins() -> None:
    local = local_origins()
    assert origin_allowed(None, local)  # not a browser
    assert origin_allowed("http://localhost:5173", local)
    assert origin_allowed("https://127.0.0.1", local)
    assert not origin_allowed("https://evil.example", local)
    assert not origin_allowed("null", local)
    assert origin_allowed("https://evil.example", ("*",))
    assert origin_allowed("https://app.example", ("https://app.example",))


def test_inspect_body() -> None:
    request = encode_request(1, "tools/list", None)
    body = inspect_body(request)
    assert body == Body((1,), False, False, (), None)
    assert type(body) is Body and body.request is not None and body.request.method == "tools/list"
    init = inspect_body(encode_request("i", "initialize", {}))
    assert type(init) is Body and init.initialize
    cancel = encode_notification("notifications/cancelled", {"requestId": "x"})
    assert inspect_body(cancel) == Body((), False, False, ("x",), None)
    batch = inspect_body(b"[" + request + b"," + encode_request(2, "ping", None) + b"]")
    assert type(batch) is Body and batch.batch and batch.request_ids == (1, 2)
    assert inspect_body(encode_result(3, {})) == Body((), False, False, (), None)


@pytest.mark.parametrize("data", [b"{nope", b"", b"[]", b"42", b'{"jsonrpc":"1.0","id":1}'])
def test_bodies_that_are_not_json_rpc_are_refused(data: bytes) -> None:
    refused = inspect_body(data)
    assert type(refused) is Refusal and refused.status == 400
    assert "error" in orjson.loads(refused.body)


def test_event_ids_name_their_stream() -> None:
    eid = event_id("7", 42)
    assert event_stream(eid) == "7" and event_sequence(eid) == 42
    assert event_stream("nonsense") is None
    assert event_stream("a.1") is None


@pytest.mark.parametrize("header", ["0.\u00b2", "\u0661.1", "1." + "9" * 5000, "1.-2", " 1.2", ""])
def test_event_ids_we_never_minted_are_unknown_not_errors(header: str) -> None:
    # A Last-Event-ID header is client input: a non-ASCII digit or a number past Python's
    # int-digit limit is an id we never minted, never an exception (it was a 500).
    assert event_stream(header) is None
    assert event_sequence(header) == -1


ids = st.one_of(st.integers(min_value=-(2**53), max_value=2**53), st.text(max_size=20))


@given(st.binary(max_size=200))
def test_inspect_body_never_raises(data: bytes) -> None:
    outcome = inspect_body(data)
    assert type(outcome) in (Body, Refusal)
    if type(outcome) is Refusal:
        assert outcome.status == 400 and "error" in orjson.loads(outcome.body)


@given(st.text(max_size=30))
def test_host_and_origin_checks_never_raise(value: str) -> None:
    host_allowed(value, local_hosts())
    origin_allowed(value, local_origins())


def test_refusals_carry_their_status_and_a_json_rpc_error() -> None:
    cases = {
        method_not_allowed("POST"): (405, INVALID_REQUEST),
        session_required(): (400, INVALID_REQUEST),
        session_not_found(): (404, SERVER_ERROR),
        forbidden_origin(): (403, INVALID_REQUEST),
        misdirected_host(): (421, INVALID_REQUEST),
    }
    for refused, (status, code) in cases.items():
        assert refused.status == status
        error = orjson.loads(refused.body)
        assert error["id"] is None and error["error"]["code"] == code
    assert method_not_allowed("GET, POST").headers == ((b"allow", b"GET, POST"),)


@pytest.mark.parametrize(
    ("host", "loopback"),
    [("localhost", True), ("127.0.0.1", True), ("127.8.9.1", True), ("::1", True),
     ("[::1]", True), ("0.0.0.0", False), ("example.com", False), ("localhost.evil", False)],
)  # fmt: skip
def test_loopback_binds(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_batches_only_at_2025_03_26() -> None:
    batch = inspect_body(b"[" + encode_request(1, "ping", None) + b"]")
    single = inspect_body(encode_request(1, "ping", None))
    assert type(batch) is Body and type(single) is Body
    assert check_batch(batch, "2025-03-26") is None
    assert check_batch(single, "2025-06-18") is None
    for version in ("2025-06-18", "2025-11-25", None):
        refused = check_batch(batch, version)
        assert refused is not None and refused.status == 400
        assert orjson.loads(refused.body)["error"]["code"] == INVALID_REQUEST


def test_inspect_body_skips_answers_and_other_notifications_in_a_batch() -> None:
    batch = b"[" + encode_result(9, {}) + b"," + encode_notification("notifications/x", {})
    batch += b"," + encode_notification("notifications/cancelled", {"requestId": None}) + b"]"
    body = inspect_body(batch)
    assert type(body) is Body and body.batch
    assert body.request_ids == () and body.cancelled == ()  # a null id cancels nothing
