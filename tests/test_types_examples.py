"""The generated protocol models against the specification's own example messages.

Every example under shared/spec/schema/2026-07-28/examples/<TypeName>/ must load through the
model of that name and come back out unchanged, both in the exact 2026-07-28 module and in the
era-neutral set that clients return.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, TypeAdapter, ValidationError

import mcpkit.types as types
from mcpkit.types import rev_2025_11_25, rev_2026_07_28

EXAMPLES = Path(__file__).resolve().parents[2] / "shared/spec/schema/2026-07-28/examples"
EXAMPLE_FILES = sorted(EXAMPLES.glob("*/*.json"))


def example_id(path: Path | None) -> str:
    return "no-examples" if path is None else f"{path.parent.name}/{path.stem}"


def round_trip(target: Any, data: Any) -> tuple[Any, Any]:
    """Validate `data` as `target` (a model class or a type alias); return (object, wire form)."""
    if isinstance(target, type) and issubclass(target, BaseModel):
        obj = target.from_wire(data)  # type: ignore[attr-defined]
        return obj, obj.to_wire()
    adapter: TypeAdapter[Any] = TypeAdapter(target)
    obj = adapter.validate_python(data)
    return obj, adapter.dump_python(obj, mode="json", by_alias=True, exclude_unset=True)


examples = pytest.mark.parametrize(
    "path",
    EXAMPLE_FILES
    or [pytest.param(None, marks=pytest.mark.skip(reason=f"no examples under {EXAMPLES}"))],
    ids=example_id,
)


def test_the_specification_ships_its_examples() -> None:
    if not EXAMPLES.parent.exists():
        message = f"{EXAMPLES.parent} is absent: shared/ must sit beside the checkout"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    assert len(EXAMPLE_FILES) == 129


@examples
def test_example_round_trips_through_its_2026_07_28_type(path: Path) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    target = getattr(rev_2026_07_28, path.parent.name)
    _, wire = round_trip(target, data)
    assert wire == data
    assert json.dumps(wire, sort_keys=True) == json.dumps(data, sort_keys=True)  # 1 stays 1


@examples
def test_example_round_trips_through_the_era_neutral_type(path: Path) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    target = getattr(types, path.parent.name, None)
    if target is None:
        pytest.skip(f"no era-neutral type {path.parent.name}")
    _, wire = round_trip(target, data)
    assert wire == data


def test_union_examples_pick_the_specific_member() -> None:
    result = TypeAdapter(rev_2026_07_28.ServerResult).validate_python(
        {"resultType": "complete", "content": [{"type": "text", "text": "hi"}]}
    )
    assert isinstance(result, rev_2026_07_28.CallToolResult)
    block = TypeAdapter(rev_2026_07_28.ContentBlock).validate_python(
        {"type": "resource_link", "uri": "file:///a", "name": "a"}
    )
    assert isinstance(block, rev_2026_07_28.ResourceLink)


# --- lossless round trips -----------------------------------------------------------------


def test_unknown_fields_survive_a_round_trip_at_every_depth() -> None:
    data = {
        "content": [{"type": "text", "text": "hi", "x-extra": [1, {"a": None}]}],
        "resultType": "complete",
        "_meta": {"vendor/trace": "abc"},
        "futureField": {"nested": True},
    }
    for model in (rev_2026_07_28.CallToolResult, types.CallToolResult):
        result = model.from_wire(data)
        assert result.to_wire() == data
        assert result.model_extra == {"futureField": {"nested": True}}


def test_a_key_that_looks_like_an_attribute_name_stays_an_unknown_field() -> None:
    data = {"content": [], "resultType": "complete", "is_error": True}
    result = rev_2026_07_28.CallToolResult.from_wire(data)
    assert result.is_error is None
    assert result.to_wire() == data


def test_numbers_keep_their_json_type() -> None:
    params = {"progressToken": "t", "progress": 1, "total": 2.5}
    wire = types.ProgressNotificationParams.from_wire(params).to_wire()
    assert json.dumps(wire, sort_keys=True) == json.dumps(params, sort_keys=True)


def test_explicit_nulls_and_unset_optionals_are_told_apart() -> None:
    task = {
        "taskId": "t1",
        "status": "working",
        "createdAt": "2025-11-25T00:00:00Z",
        "lastUpdatedAt": "2025-11-25T00:00:00Z",
        "ttl": None,
    }
    assert rev_2025_11_25.Task.from_wire(task).to_wire() == task


# --- attribute names ----------------------------------------------------------------------


def test_attributes_are_snake_case_and_the_wire_is_camel_case() -> None:
    tool = types.Tool.from_wire(
        {"name": "add", "inputSchema": {"type": "object", "properties": {"a": {}}}, "_meta": {}}
    )
    assert tool.input_schema.type == "object"
    assert tool.meta == {}
    result = types.CallToolResult.from_wire({"content": [], "structuredContent": {"sum": 3}})
    assert result.structured_content == {"sum": 3}
    built = rev_2026_07_28.CallToolResult(content=[], result_type="complete", is_error=False)
    assert built.to_wire() == {"content": [], "resultType": "complete", "isError": False}


def test_namespaced_meta_keys_get_python_names_and_keep_their_wire_names() -> None:
    wire = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"roots": {}},
        "progressToken": 7,
    }
    meta = rev_2026_07_28.RequestMetaObject.from_wire(wire)
    assert meta.protocol_version == "2026-07-28"
    assert meta.client_capabilities.roots == {}
    assert meta.progress_token == 7
    assert meta.to_wire() == wire


# --- eras -----------------------------------------------------------------------------------


OLD_CALL_TOOL_RESULT = {"content": [{"type": "text", "text": "4"}], "isError": False}


def test_a_2025_11_25_result_parses_through_the_era_neutral_model() -> None:
    result = types.CallToolResult.from_wire(OLD_CALL_TOOL_RESULT)
    assert result.result_type is None
    assert result.content[0].text == "4"  # type: ignore[union-attr]
    assert result.to_wire() == OLD_CALL_TOOL_RESULT
    assert rev_2025_11_25.CallToolResult.from_wire(OLD_CALL_TOOL_RESULT).to_wire() == (
        OLD_CALL_TOOL_RESULT
    )


def test_a_2025_11_25_request_parses_through_the_era_neutral_model() -> None:
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "add", "arguments": {"a": 1}, "_meta": {"progressToken": "p"}},
    }
    parsed = types.CallToolRequest.from_wire(request)
    assert parsed.params.meta is not None
    assert parsed.params.meta.progress_token == "p"
    assert parsed.to_wire() == request


# --- rejection ------------------------------------------------------------------------------


def test_a_2026_07_28_result_requires_result_type() -> None:
    with pytest.raises(ValidationError, match="resultType"):
        rev_2026_07_28.CallToolResult.from_wire(OLD_CALL_TOOL_RESULT)


@pytest.mark.parametrize(
    ("model", "data", "missing"),
    [
        (types.Tool, {"inputSchema": {"type": "object"}}, "name"),
        (types.CallToolResult, {"isError": True}, "content"),
        (rev_2026_07_28.TextContent, {"type": "text"}, "text"),
        (
            rev_2026_07_28.CallToolRequest,
            {"jsonrpc": "2.0", "id": 1, "method": "tools/call"},
            "params",
        ),
    ],
)
def test_a_missing_required_field_is_rejected(model: Any, data: Any, missing: str) -> None:
    with pytest.raises(ValidationError) as raised:
        model.from_wire(data)
    assert [e["loc"] for e in raised.value.errors()] == [(missing,)]


def test_a_wrong_constant_is_rejected() -> None:
    with pytest.raises(ValidationError):
        rev_2026_07_28.TextContent.from_wire({"type": "image", "text": "x"})
    with pytest.raises(ValidationError):
        TypeAdapter(rev_2026_07_28.ContentBlock).validate_python({"type": "video", "data": ""})
