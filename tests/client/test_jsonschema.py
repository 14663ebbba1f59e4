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


# Valid for jsonschema; a validator that turned what it cannot decide into "invalid" (under
# `not`, `oneOf`, `if`) rejected each of them.
UNDECIDED_BUT_VALID: list[tuple[dict[str, Any], Any]] = [
    ({"not": {"unevaluatedProperties": False}}, {"x": 1}),
    ({"not": {"unevaluatedItems": False}}, [1]),
    ({"oneOf": [{"type": "object"}, {"unevaluatedProperties": False}]}, {"x": 1}),
    ({"not": {"$ref": "#thing"}, "$defs": {"t": {"$anchor": "thing", "type": "string"}}}, 1),
    ({"if": {"unevaluatedProperties": False}, "then": {"required": ["y"]}}, {"x": 1}),
    ({"not": {"properties": {"a": {"unevaluatedProperties": False}}}}, {"a": {"b": 1}}),
]
# No verdict without what the schema leaves out (a remote document, a dynamic scope, a type
# name's meaning, draft 7's `dependencies`): jsonschema raises or reads another draft; ours
# must not reject.
UNDECIDABLE: list[tuple[dict[str, Any], Any]] = [
    ({"oneOf": [{"required": ["x"]}, {"$dynamicRef": "#meta", "type": "string"}]}, {"x": 1}),
    ({"anyOf": [{"type": "string"}, {"not": {"$ref": "https://example.com/s.json"}}]}, 3),
    ({"not": {"$ref": "#/$defs/missing"}}, 1),
    ({"not": {"type": "decimal"}}, 1.5),
    ({"not": {"dependencies": {"a": ["b"]}}}, {"a": 1}),
    ({"not": {"pattern": "(?<=unclosed"}}, "text"),
]


@pytest.mark.parametrize(("schema", "value"), UNDECIDED_BUT_VALID)
def test_what_it_cannot_decide_is_never_a_rejection(schema: dict[str, Any], value: Any) -> None:
    assert jsonschema.Draft202012Validator(schema).is_valid(value)
    assert schema_errors(schema, value) == []


@pytest.mark.parametrize(("schema", "value"), UNDECIDABLE)
def test_what_no_validator_can_decide_is_accepted(schema: dict[str, Any], value: Any) -> None:
    assert schema_errors(schema, value) == []


def test_undecided_parts_do_not_hide_definite_failures() -> None:
    schema = {"type": "object", "unevaluatedProperties": False, "required": ["a"]}
    assert schema_errors(schema, {"x": 1}) == ["$: missing required property 'a'"]
    two = {"oneOf": [{"type": "integer"}, {"minimum": 0}, {"$dynamicRef": "#m"}]}
    assert schema_errors(two, 1) == ["$: matches 2 of the oneOf shapes; exactly 1 is needed"]
    assert schema_errors({"not": {"type": "string", "x-custom": 1}}, "a") != []
    assert schema_errors({"unevaluatedProperties": False}, {}) == []  # nothing to evaluate


def test_contains_counts_with_min_and_max_contains() -> None:
    schema = {"contains": {"const": 1}, "minContains": 2, "maxContains": 3}
    assert schema_errors(schema, [1, 1, 2]) == []
    assert schema_errors(schema, [1, 2]) == ["$: needs at least 2 items matching 'contains', has 1"]
    assert schema_errors(schema, [1, 1, 1, 1]) == [
        "$: allows at most 3 items matching 'contains', has 4"
    ]
    assert schema_errors({"contains": {"const": 1}, "minContains": 0}, []) == []
    # `not` around contains with minContains: one match is not two, so the negation holds
    assert schema_errors({"not": {"contains": {"const": 1}, "minContains": 2}}, [1, 2]) == []


def test_dependent_schemas_apply_when_the_property_is_present() -> None:
    schema = {"dependentSchemas": {"card": {"required": ["billing"]}}}
    assert schema_errors(schema, {"card": 1}) == ["$: missing required property 'billing'"]
    assert schema_errors(schema, {"card": 1, "billing": "x"}) == []
    assert schema_errors(schema, {"cash": 1}) == []


def test_refs_inside_an_embedded_resource_point_into_it() -> None:
    schema = {
        "$defs": {"n": {"type": "string"}},
        "properties": {
            "a": {"$id": "urn:example:a", "$defs": {"n": {"type": "integer"}}, "$ref": "#/$defs/n"}
        },
    }
    assert schema_errors(schema, {"a": 1}) == []
    assert schema_errors(schema, {"a": "x"}) == ["$.a: expected integer, got string"]
    # a pointer that crosses into another resource is not followed: undecided
    assert schema_errors({"not": {"$ref": "#/properties/a/$defs/n"}, **schema}, 1) == []


def test_multiples_of_huge_numbers_do_not_overflow() -> None:
    assert schema_errors({"multipleOf": 3}, 10**400) != []
    assert schema_errors({"multipleOf": 3}, 3 * 10**400) == []
    assert schema_errors({"multipleOf": 0.5}, 10**400) == []
    assert schema_errors({"multipleOf": 0.1}, 0.3) == []  # the tolerance (see the module)


def test_a_draft_7_anchor_id_is_no_new_resource() -> None:
    schema = {
        "definitions": {"n": {"type": "integer"}},
        "properties": {"a": {"$id": "#a", "items": {"$ref": "#/definitions/n"}}},
    }
    assert schema_errors(schema, {"a": [1]}) == []
    assert schema_errors(schema, {"a": ["x"]}) == ["$.a[0]: expected integer, got string"]
