"""The Mcp-* request headers of 2026-07-28: encoding, x-mcp-header paths, the server's check."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit.protocol.http_headers import (
    InvalidHeaderAnnotation,
    check_request_headers,
    decode_header_value,
    encode_header_value,
    header_paths,
    request_headers,
)

VERSION = "2026-07-28"


@pytest.mark.parametrize(
    ("value", "header"),
    [  # the spec's table, then the other types
        ("us-west1", "us-west1"),
        ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
        (" padded ", "=?base64?IHBhZGRlZCA=?="),
        ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
        ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
        ("internal space", "internal space"),
        ("\ttab", "=?base64?CXRhYg==?="),
        ("", "=?base64??="),
        (42, "42"),
        (-7, "-7"),
        (True, "true"),
        (False, "false"),
    ],
)
def test_values_encode_as_the_spec_says_and_decode_back(value: Any, header: str) -> None:
    assert encode_header_value(value) == header
    expected = value if isinstance(value, str) else header
    assert decode_header_value(header) == expected


@pytest.mark.parametrize(
    "broken",
    [
        "=?base64?SGVsbG8?=",
        "=?base64?SGVs!!!bG8=?=",
        "=?base64?/w==?=",
        "caf\u00e9",
        "a\nb",
        "a\x00",
    ],
)
def test_broken_values_are_refused(broken: str) -> None:
    with pytest.raises(ValueError):
        decode_header_value(broken)


def test_sentinel_without_both_markers_is_a_literal() -> None:
    assert decode_header_value("SGVsbG8=") == "SGVsbG8="
    assert decode_header_value("=?base64?SGVsbG8=") == "=?base64?SGVsbG8="
    assert decode_header_value("SGVsbG8=?=") == "SGVsbG8=?="


def prop(kind: Any, name: str | None = None, **more: Any) -> dict[str, Any]:
    schema = {"type": kind, **more}
    if name is not None:
        schema["x-mcp-header"] = name
    return schema


def test_paths_follow_properties_chains() -> None:
    schema = {
        "type": "object",
        "properties": {
            "region": prop("string", "Region"),
            "count": prop("integer", "Count"),
            "flag": prop(["boolean", "null"], "Flag"),
            "query": prop("string"),
            "target": {
                "type": "object",
                "properties": {"zone": prop("string", "Zone"), "properties": prop("string", "P")},
            },
        },
    }
    assert header_paths(schema) == {
        "Region": ("region",),
        "Count": ("count",),
        "Flag": ("flag",),
        "Zone": ("target", "zone"),
        "P": ("target", "properties"),
    }
    assert header_paths({"type": "object"}) == {}
    assert (
        header_paths({"type": "object", "properties": {"e": prop("string", enum=["x-mcp-header"])}})
        == {}
    )


@pytest.mark.parametrize(
    ("properties", "extra"),
    [
        ({"v": prop("string", "")}, {}),
        ({"v": prop("object", "Data")}, {}),
        ({"v": prop("array", "Items", items={"type": "string"})}, {}),
        ({"v": prop("null", "Nil")}, {}),
        ({"v": prop("number", "Score")}, {}),
        ({"v": {"x-mcp-header": "Untyped"}}, {}),
        ({"a": prop("string", "Region"), "b": prop("string", "Region")}, {}),
        ({"a": prop("string", "MyField"), "b": prop("string", "myfield")}, {}),
        ({"v": prop("string", "My Region")}, {}),
        ({"v": prop("string", "Region:Primary")}, {}),
        ({"v": prop("string", "R\u00e9gion")}, {}),
        ({"v": prop("string", "Region\t1")}, {}),
        ({"v": prop("string", 7)}, {}),
        ({"v": {"type": "array", "items": prop("string", "InItems")}}, {}),
        ({"v": {"oneOf": [prop("string", "InOneOf")]}}, {}),
        ({"v": {"$ref": "#/$defs/d"}}, {"$defs": {"d": prop("string", "InDefs")}}),
        ({}, {"x-mcp-header": "Root"}),
        ({"v": {"if": {"properties": {"w": prop("string", "InIf")}}}}, {}),
    ],
)
def test_invalid_annotations_make_the_tool_invalid(
    properties: dict[str, Any], extra: dict[str, Any]
) -> None:
    with pytest.raises(InvalidHeaderAnnotation):
        header_paths({"type": "object", "properties": properties, **extra})


PATHS = {"Region": ("region",), "Count": ("count",), "Zone": ("target", "zone"), "Flag": ("flag",)}


def call(**arguments: Any) -> dict[str, Any]:
    meta = {"io.modelcontextprotocol/protocolVersion": VERSION}
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "locate", "arguments": arguments, "_meta": meta},
    }


def headers_of(message: dict[str, Any], paths: dict[str, tuple[str, ...]]) -> dict[str, str]:
    built = request_headers(message["method"], message["params"], paths)
    headers = {name.lower(): value for name, value in built}
    return {**headers, "mcp-protocol-version": VERSION}


def test_client_headers_mirror_present_arguments_only() -> None:
    message = call(region="Hello, 世界", count=42, target={"zone": "a"}, flag=None, query="q")
    built = request_headers("tools/call", message["params"], PATHS)
    assert built == [
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "locate"),
        ("Mcp-Param-Region", "=?base64?SGVsbG8sIOS4lueVjA==?="),
        ("Mcp-Param-Count", "42"),
        ("Mcp-Param-Zone", "a"),
    ]
    read = request_headers("resources/read", {"uri": "memo://caf\u00e9"}, {})
    assert read == [("Mcp-Method", "resources/read"), ("Mcp-Name", "=?base64?bWVtbzovL2NhZsOp?=")]
    assert request_headers("tools/list", {}, {}) == [("Mcp-Method", "tools/list")]
    # What the client builds, the server accepts.
    assert check_request_headers(headers_of(message, PATHS), message, PATHS) is None


def test_server_check_names_each_problem() -> None:
    message = call(region="us", count=42)
    good = headers_of(message, PATHS)
    assert check_request_headers({**good, "mcp-param-count": "42.0"}, message, PATHS) is None
    assert (
        check_request_headers({**good, "mcp-name": "=?base64?bG9jYXRl?="}, message, PATHS) is None
    )
    cases = {
        "no version": (
            {k: v for k, v in good.items() if k != "mcp-protocol-version"},
            "MCP-Protocol-Version",
        ),
        "other version": ({**good, "mcp-protocol-version": "2025-11-25"}, "MCP-Protocol-Version"),
        "no method": ({k: v for k, v in good.items() if k != "mcp-method"}, "Mcp-Method"),
        "other method": ({**good, "mcp-method": "tools/list"}, "Mcp-Method"),
        "name case": ({**good, "mcp-name": "LOCATE"}, "Mcp-Name"),
        "broken name": ({**good, "mcp-name": "=?base64?bG9jYXRl?"}, None),
        "missing param": (
            {k: v for k, v in good.items() if k != "mcp-param-region"},
            "Mcp-Param-Region",
        ),
        "other param": ({**good, "mcp-param-region": "eu"}, "Mcp-Param-Region"),
        "other number": ({**good, "mcp-param-count": "43"}, "Mcp-Param-Count"),
        "not a number": ({**good, "mcp-param-count": "forty-two"}, "Mcp-Param-Count"),
        "bad padding": ({**good, "mcp-param-region": "=?base64?dXM?="}, "Mcp-Param-Region"),
        "header for an absent argument": ({**good, "mcp-param-zone": "a"}, "Mcp-Param-Zone"),
    }
    for case, (headers, named) in cases.items():
        problem = check_request_headers(headers, message, PATHS)
        assert problem is not None and problem.startswith("Header mismatch"), case
        if named:
            assert named in problem, case
    flagged = call(region="us", count=1, flag=False)
    headers = headers_of(flagged, PATHS)
    assert headers["mcp-param-flag"] == "false"
    assert check_request_headers(headers, flagged, PATHS) is None
    assert check_request_headers({**headers, "mcp-param-flag": "true"}, flagged, PATHS)
