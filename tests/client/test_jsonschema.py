"""The client's small JSON Schema validator: the vocabulary tool schemas use, checked against
the `jsonschema` package (a full Draft 2020-12 validator) on the same schemas and values."""

from __future__ import annotations

from typing import Any, Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, TypeAdapter

from mcpkit.client._jsonschema import schema_errors

jsonschema = pytest.importorskip("jsonschema", reason="the reference validator comes with mcp")


class Address(BaseModel):
    street: str
    zip_code: str | None = None


class Person(BaseModel):
    name: str
    age: int
    height: float = 1.7
    tags: list[str] = []
    role: Literal["admin", "user"] = "user"
    address: Address | None = None
    friends: list[Person] = []


PERSON = TypeAdapter(Person).json_schema()

SCHEMAS: list[dict[str, Any]] = [
    PERSON,
    {"type": "object", "properties": {"t": {"type": "number"}}, "required": ["t"]},
    {"type": ["string", "null"], "minLength": 2, "maxLength": 4, "pattern": "^[a-z]+$"},
    {"type": "integer", "minimum": 0, "exclusiveMaximum": 10, "multipleOf": 2},
    {"type": "array", "items": {"type": "integer"}, "minItems": 1, "uniqueItems": True},
    {"type": "array", "prefixItems": [{"type": "string"}, {"type": "boolean"}], "items": False},
    {"enum": ["a", 1, None, [1, 2]]},
    {"const": {"k": [1, True]}},
    {"anyOf": [{"type": "string"}, {"type": "integer", "maximum": 3}]},
    {"oneOf": [{"type": "number"}, {"type": "integer"}]},
    {"allOf": [{"type": "object"}, {"required": ["a"]}], "not": {"required": ["b"]}},
    {
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "patternProperties": {"^x-": {"type": "integer"}},
        "additionalProperties": {"type": "boolean"},
        "propertyNames": {"maxLength": 5},
        "minProperties": 1,
        "maxProperties": 3,
        "dependentRequired": {"a": ["b"]},
    },
    {"if": {"type": "string"}, "then": {"minLength": 3}, "else": {"type": "integer"}},
    {"type": "array", "contains": {"const": 7}, "maxItems": 3},
    {"$defs": {"n": {"type": "integer"}}, "type": "array", "items": {"$ref": "#/$defs/n"}},
]

# Values on and around the boundaries the schemas above draw.
EDGES: list[Any] = [
    None, True, False, -1, 0, 1, 2, 3, 4, 7, 8, 10, 12, 2.5, 3.0, 1.7,
    "", "a", "ab", "abc", "ABC", "abcde", "x-1", "admin", "user",
    [], [1], [1, 1], [1, 2], [7], [1, 2, 7, 8], ["a", True], ["a", True, 1], ["a", "b"],
    {}, {"a": "x"}, {"a": "x", "b": True}, {"b": 1}, {"x-1": 1}, {"x-1": "1"}, {"t": 1},
    {"k": [1, True]}, {"k": [1, 1]}, {"long-name": True}, {"name": "Ada", "age": 3},
    {"name": "Ada", "age": 3, "role": "root"}, {"name": "Ada", "age": 3.5},
]  # fmt: skip

json_values = st.recursive(
    st.sampled_from(EDGES) | st.integers(-20, 20) | st.floats(-20, 20, allow_nan=False),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(["a", "b", "t", "x-1", "x-2", "name", "age", "tags", "long-name"]),
            inner,
            max_size=4,
        )
    ),
    max_leaves=12,
)


@pytest.mark.parametrize("schema", SCHEMAS)
def test_edge_values_get_the_verdict_of_a_full_validator(schema: dict[str, Any]) -> None:
    full = jsonschema.Draft202012Validator(schema)
    for value in EDGES:
        ours = schema_errors(schema, value)
        assert (not ours) == full.is_valid(value), (schema, value, ours)


@settings(max_examples=300, deadline=None)
@given(schema=st.sampled_from(SCHEMAS), value=json_values)
def test_verdicts_match_a_full_validator(schema: dict[str, Any], value: Any) -> None:
    full = jsonschema.Draft202012Validator(schema)
    ours = schema_errors(schema, value)
    assert (not ours) == full.is_valid(value), (schema, value, ours)


def test_pydantic_models_round_trip_and_mistakes_are_named() -> None:
    good = Person(
        name="Ada",
        age=36,
        tags=["x"],
        address=Address(street="Main"),
        friends=[Person(name="B", age=1)],
    ).model_dump(mode="json")
    assert schema_errors(PERSON, good) == []

    bad = {**good, "age": "36", "role": "root"}
    bad["friends"] = [{"name": "B"}]
    errors = schema_errors(PERSON, bad)
    assert "$.age: expected integer, got string" in errors
    assert "$.role: must be one of ['admin', 'user'], got 'root'" in errors
    assert "$.friends[0]: missing required property 'age'" in errors


def test_integers_follow_json_not_python() -> None:
    schema = {"type": "integer"}
    assert schema_errors(schema, 3.0) == []
    assert schema_errors(schema, True) == ["$: expected integer, got boolean"]
    assert schema_errors({"type": "number"}, False) == ["$: expected number, got boolean"]
    assert schema_errors({"enum": [1]}, True) != []
    assert schema_errors({"const": 1}, 1.0) == []


def test_unknown_keywords_and_remote_refs_never_reject() -> None:
    assert schema_errors({"x-custom": 1, "$ref": "https://example.com/s.json"}, {"a": 1}) == []
    assert schema_errors({"$ref": "#/$defs/missing"}, 1) == []
    assert schema_errors({"$ref": "#"}, 1) == []  # a reference to itself ends
    assert schema_errors({"pattern": "(?<=unclosed"}, "text") == []  # unreadable regex: unchecked


def test_formats_are_checked_only_when_asked() -> None:
    checks = {
        "email": ("ada@example.com", "ada@"),
        "uri": ("https://example.com/x", "not a uri"),
        "date": ("2025-11-25", "2025-13-01"),
        "date-time": ("2025-11-25T10:00:00Z", "2025-11-25"),
    }
    for fmt, (good, bad) in checks.items():
        schema = {"type": "string", "format": fmt}
        assert schema_errors(schema, good, check_formats=True) == []
        assert schema_errors(schema, bad, check_formats=True) == [
            f"$: {bad!r} is not a valid {fmt}"
        ]
        assert schema_errors(schema, bad) == []


def test_messages_are_capped() -> None:
    schema = {"type": "object", "additionalProperties": False}
    many = {f"k{i}": i for i in range(50)}
    assert len(schema_errors(schema, many)) == 10
    assert len(schema_errors(schema, many, limit=3)) == 3
