"""The 2026-07-28 Streamable HTTP rules as pure functions: which POSTs are served statelessly,
how a malformed envelope is refused and with which status. No event loop, no sockets."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from mcpkit.errors import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    UNSUPPORTED_PROTOCOL_VERSION,
)
from mcpkit.protocol.http import (
    Body,
    Refusal,
    cancellation,
    check_per_request_body,
    check_per_request_version,
    header_mismatch,
    inspect_body,
    is_per_request_post,
    per_request_status,
)
from mcpkit.protocol.jsonrpc import Request, encode_notification, encode_request
from mcpkit.protocol.outgoing import Outgoing
from mcpkit.protocol.per_request import CLIENT_CAPABILITIES, PROTOCOL_VERSION, Envelope

MODERN = "2026-07-28"


def body(method: str, meta: Any = None, request_id: int = 1) -> Body:
    params = {} if meta is None else {"_meta": meta}
    inspected = inspect_body(encode_request(request_id, method, params))
    assert isinstance(inspected, Body)
    return inspected


def error_of(refused: Refusal) -> dict[str, Any]:
    error: dict[str, Any] = orjson.loads(refused.body)["error"]
    return error


def test_which_posts_are_modern() -> None:
    enveloped = body("tools/list", {PROTOCOL_VERSION: MODERN, CLIENT_CAPABILITIES: {}})
    plain = body("tools/list")
    assert enveloped.per_request and not plain.per_request
    assert is_per_request_post(None, None, enveloped)
    assert is_per_request_post(None, f" {MODERN} ", plain)  # the header alone is enough
    assert not is_per_request_post(None, "2025-11-25", plain)
    assert not is_per_request_post(None, None, plain)
    assert not is_per_request_post("session-1", MODERN, enveloped)  # a session stays handshake


def test_well_formed_request_gives_its_envelope() -> None:
    meta = {PROTOCOL_VERSION: MODERN, CLIENT_CAPABILITIES: {"sampling": {}}}
    envelope = check_per_request_body(body("tools/list", meta))
    assert isinstance(envelope, Envelope)
    assert envelope.version == MODERN and envelope.capabilities == {"sampling": {}}


def test_batch_and_initialize_are_refused() -> None:
    batch = inspect_body(b"[" + encode_request(1, "ping", {}).rstrip() + b"]")
    assert isinstance(batch, Body)
    refused = check_per_request_body(batch)
    assert isinstance(refused, Refusal) and refused.status == 400
    assert error_of(refused)["code"] == INVALID_REQUEST
    refused = check_per_request_body(body("initialize", {PROTOCOL_VERSION: MODERN}))
    assert isinstance(refused, Refusal) and refused.status == 404
    assert error_of(refused)["code"] == METHOD_NOT_FOUND


def test_notification_passes_without_an_envelope() -> None:
    inspected = inspect_body(encode_notification("notifications/cancelled", {"requestId": 1}))
    assert isinstance(inspected, Body)
    assert check_per_request_body(inspected) is None


@pytest.mark.parametrize(
    ("meta", "problem"),
    [
        (None, "carries no _meta"),
        ({CLIENT_CAPABILITIES: {}}, "carries no _meta"),
        ({PROTOCOL_VERSION: 20260728, CLIENT_CAPABILITIES: {}}, "must be a string"),
        ({PROTOCOL_VERSION: MODERN}, "clientCapabilities"),
        ({PROTOCOL_VERSION: MODERN, CLIENT_CAPABILITIES: []}, "clientCapabilities"),
    ],
)
def test_malformed_envelope_is_400_invalid_params(meta: Any, problem: str) -> None:
    refused = check_per_request_body(body("tools/list", meta, request_id=7))
    assert isinstance(refused, Refusal) and refused.status == 400
    error = error_of(refused)
    assert error["code"] == INVALID_PARAMS and problem in error["message"]
    assert orjson.loads(refused.body)["id"] == 7


def test_unknown_version_waits_for_the_header_checks() -> None:
    """A version we do not serve is reported after the headers are checked: the envelope's
    other fields are checked now (a malformed one is -32602 first), the version later."""
    unknown = body("tools/list", {PROTOCOL_VERSION: "2099-01-01", CLIENT_CAPABILITIES: {}})
    assert check_per_request_body(unknown) is None
    malformed = body("tools/list", {PROTOCOL_VERSION: "2099-01-01"})
    refused = check_per_request_body(malformed)
    assert isinstance(refused, Refusal) and error_of(refused)["code"] == INVALID_PARAMS
    assert isinstance(unknown.request, Request)
    refused = check_per_request_version(unknown.request)
    assert refused.status == 400
    error = error_of(refused)
    assert error["code"] == UNSUPPORTED_PROTOCOL_VERSION
    assert error["data"]["requested"] == "2099-01-01" and MODERN in error["data"]["supported"]


def test_header_mismatch_and_statuses() -> None:
    refused = header_mismatch("r1", "Mcp-Name does not match params.name")
    assert refused.status == 400
    assert error_of(refused) == {
        "code": HEADER_MISMATCH,
        "message": "Mcp-Name does not match params.name",
    }
    assert per_request_status(Outgoing(b"", 1, True, None)) == 200
    assert per_request_status(Outgoing(b"", 1, True, METHOD_NOT_FOUND)) == 404
    assert per_request_status(Outgoing(b"", 1, True, UNSUPPORTED_PROTOCOL_VERSION)) == 400
    assert per_request_status(Outgoing(b"", 1, True, -32603)) == 200  # a plain error answer


def test_cancellation_names_the_request() -> None:
    message = orjson.loads(cancellation("abc"))
    assert message["method"] == "notifications/cancelled"
    assert message["params"]["requestId"] == "abc" and "jsonrpc" in message
