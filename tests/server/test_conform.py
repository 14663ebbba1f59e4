"""`conform`, the second look at arguments, judged against `jsonschema` (Draft 2020-12) on the
keywords it understands: it must refuse exactly what the validator refuses, and give back the
value with integral floats made ints where an integer is wanted."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from mcpkit.server.conform import Refused, conform, json_equal, pydantic_gaps

SCHEMAS: list[dict[str, Any]] = [
    {"type": "integer"},
    {"type": ["integer", "null"]},
    {"type": "number"},
    {"enum": [1, 2, "a", None]},
    {"const": True},
    {"const": [1, {"a": 2}]},
    {"anyOf": [{"type": "integer"}, {"type": "string"}]},
    {"oneOf": [{"type": "boolean"}, {"type": "null"}]},
    {"allOf": [{"type": "array"}, {"items": {"type": "integer"}}]},
    {"type": "array", "prefixItems": [{"type": "string"}], "items": {"type": "integer"}},
    {"type": "array", "items": {"type": "integer"}, "uniqueItems": True},
    {"type": "array", "items": False},
    {
        "type": "object",
        "properties": {"n": {"type": "integer"}},
        "required": ["n"],
        "additionalProperties": False,
    },
    {"type": "object", "additionalProperties": {"type": "integer"}},
    {"$defs": {"Level": {"enum": [1, 2], "type": "integer"}}, "$ref": "#/$defs/Level"},
    {"$defs": {"P": {"type": "object", "properties": {"x": {"$ref": "#/$defs/N"}}},
     "N": {"type": "integer"}}, "$ref": "#/$defs/P"},
]  # fmt: skip
VALUES: list[Any] = [
    0, 1, 1.0, 2.0, 2.5, True, False, None, "a", "1", [], [1], [1.0], [1, 1.0], ["a", 1, 2.0],
    ["a", "b"], [1, [1]], [1, {"a": 2}], [1, {"a": 2.0}], [1, {"a": True}], {}, {"n": 1},
    {"n": 1.0}, {"n": 1, "m": 2}, {"n": True}, {"x": 3.0}, {"x": "3"}, {"m": 2.0},
]  # fmt: skip


@pytest.mark.parametrize("schema", SCHEMAS, ids=lambda schema: repr(schema)[:40])
def test_conform_refuses_exactly_what_a_2020_12_validator_refuses(schema: dict[str, Any]) -> None:
    validator = jsonschema.Draft202012Validator(schema)
    for value in VALUES:
        valid = validator.is_valid(value)
        try:
            conformed = conform(schema, value)
        except Refused:
            assert not valid, (schema, value)
            continue
        assert valid, (schema, value)
        assert validator.is_valid(conformed), (schema, value, conformed)


def test_integral_floats_become_ints_where_integers_are_wanted() -> None:
    assert type(conform({"type": "integer"}, 3.0)) is int
    assert conform({"type": "array", "items": {"type": "integer"}}, [1.0, 2]) == [1, 2]
    assert type(conform({"type": "number"}, 3.0)) is float  # a number stays as given
    assert conform({"enum": [1, 2]}, 2.0) == 2  # the listed member comes back
    assert type(conform({"enum": [1, 2]}, 2.0)) is int


def test_json_equality_and_the_gaps_read_at_registration() -> None:
    assert json_equal(3, 3.0) and json_equal([1, {"a": 2}], [1.0, {"a": 2.0}])
    assert not json_equal(True, 1) and not json_equal([True], [1]) and not json_equal(0, False)
    assert pydantic_gaps({"properties": {"v": {"enum": ["a"]}}}) == frozenset()
    assert pydantic_gaps({"$defs": {"L": {"enum": [1, 2]}}}) == {"number"}
    assert pydantic_gaps({"anyOf": [{"const": True}, {"uniqueItems": True}]}) == {
        "boolean",
        "uniqueItems",
    }
