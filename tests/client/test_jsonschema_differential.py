"""The client's small validator against the `jsonschema` package (Draft 2020-12, format off),
on hypothesis-generated schemas and values.

Two properties:
- over every 2020-12 keyword, those the module does not implement included (unevaluated*,
  $dynamicRef, $anchor refs, fractional multipleOf, ...): when ours rejects, jsonschema rejects
  too. The reverse is no requirement: ours may let through what it cannot decide.
- over the vocabulary the module claims to implement: the same verdict on every value.
Both are checked on each schema and on its negation (`not`), where ours rejecting means ours
found the schema definitely valid: so "definitely valid" is checked as well as "invalid".

Schemas are generated whole: a root with `$defs` (each def may refer only to earlier ones, so no
reference loops), local refs, embedded `$id` resources, and any keyword at any depth. Each
example checks several values against one schema. MCPKIT_JSONSCHEMA_EXAMPLES sets the number of
examples per property (300 by default).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpkit.client._jsonschema import schema_errors

jsonschema = pytest.importorskip("jsonschema", reason="the reference validator comes with mcp")
referencing = pytest.importorskip("referencing.exceptions", reason="jsonschema's $ref resolver")

EXAMPLES = int(os.environ.get("MCPKIT_JSONSCHEMA_EXAMPLES", "300"))
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

KEYS = ["a", "b", "c", "x-1"]
STRINGS = ["", "a", "b", "ab", "ba", "abc", "x-1", "1", "c"]
PATTERNS = ["^a", "b$", "^x-", "[0-9]", "^$", "a|c", "^.{2,}$"]
TYPES = ["null", "boolean", "object", "array", "number", "string", "integer"]
FORMATS = ["email", "uri", "date", "date-time", "ipv4", "made-up"]
DIALECT = "https://json-schema.org/draft/2020-12/schema"
VOCABULARY = "https://json-schema.org/draft/2020-12/vocab/validation"

scalars = (
    st.none()
    | st.booleans()
    | st.integers(-3, 10)
    | st.sampled_from([0.5, 1.0, 2.5, -1.5, 3.0, 4.5])
    | st.sampled_from(STRINGS)
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(KEYS), inner),
    max_leaves=10,
)
numbers = st.integers(-2, 6) | st.sampled_from([0.5, 2.5, -1.5])
small = st.integers(0, 4)
keys = st.sampled_from(KEYS)

# Keywords whose value holds no subschema, with the values they get.
LEAVES: dict[str, st.SearchStrategy[Any]] = {
    "type": st.sampled_from(TYPES) | st.lists(st.sampled_from(TYPES), min_size=1, unique=True),
    "enum": st.lists(values, min_size=1, max_size=4),
    "const": values,
    "multipleOf": st.integers(1, 4) | st.sampled_from([0.5, 2.0, 1.5]),
    "maximum": numbers,
    "exclusiveMaximum": numbers,
    "minimum": numbers,
    "exclusiveMinimum": numbers,
    "maxLength": small,
    "minLength": small,
    "pattern": st.sampled_from(PATTERNS),
    "maxItems": small,
    "minItems": small,
    "uniqueItems": st.booleans(),
    "maxContains": small,
    "minContains": small,
    "maxProperties": small,
    "minProperties": small,
    "required": st.lists(keys, unique=True, max_size=3),
    "dependentRequired": st.dictionaries(keys, st.lists(keys, unique=True, max_size=2)),
    "format": st.sampled_from(FORMATS),
    "contentEncoding": st.sampled_from(["base64", "7bit"]),
    "contentMediaType": st.sampled_from(["application/json", "text/plain"]),
    "title": st.sampled_from(["T", ""]),
    "description": st.sampled_from(["D", ""]),
    "default": values,
    "examples": st.lists(values, max_size=2),
    "deprecated": st.booleans(),
    "readOnly": st.booleans(),
    "writeOnly": st.booleans(),
    "$comment": st.just("a comment"),
}
# Keywords whose value is a subschema, a list of them, or a map of them.
ONE_SCHEMA = ["additionalProperties", "propertyNames", "items", "contains", "not", "if", "then"]
ONE_SCHEMA += ["else", "contentSchema"]
SCHEMA_LISTS = ["prefixItems", "allOf", "anyOf", "oneOf"]
SCHEMA_MAPS = {"properties": KEYS, "dependentSchemas": KEYS, "patternProperties": PATTERNS}
REFERENCES = ["$ref"]
# Implemented by jsonschema, not by the module: its verdict may only be more lenient here.
UNDECIDED_ONE_SCHEMA = ["unevaluatedProperties", "unevaluatedItems"]
UNDECIDED_REFERENCES = ["$dynamicRef"]


@dataclass
class Vocabulary:
    """What a generated document may use, and the references that resolve where we are."""

    full: bool
    refs: tuple[str, ...] = ()
    dynamic_refs: tuple[str, ...] = ()
    resources: dict[str, Any] | None = field(default_factory=dict)  # root $defs with an $id

    def keywords(self, depth: int) -> list[str]:
        names = list(LEAVES)
        if depth > 0:
            names += ONE_SCHEMA + SCHEMA_LISTS + list(SCHEMA_MAPS)
            names += UNDECIDED_ONE_SCHEMA if self.full else []
        names += REFERENCES if self.refs else []
        names += UNDECIDED_REFERENCES if self.dynamic_refs else []
        return names


def draw_schema(draw: st.DrawFn, vocab: Vocabulary, depth: int) -> Any:
    shape = draw(st.integers(0, 15))
    if shape == 0:
        return draw(st.booleans())
    if shape == 1 and depth > 0 and vocab.resources is not None:
        return {"$ref": draw_resource(draw, vocab.full, vocab.resources, depth - 1)}
    names = draw(st.lists(st.sampled_from(vocab.keywords(depth)), max_size=4, unique=True))
    return {name: draw_value(draw, vocab, name, depth - 1) for name in names}


def draw_value(draw: st.DrawFn, vocab: Vocabulary, name: str, depth: int) -> Any:
    if name == "$ref":
        return draw(st.sampled_from(vocab.refs))
    if name == "$dynamicRef":
        return draw(st.sampled_from(vocab.dynamic_refs))
    if name == "multipleOf" and vocab.full:
        return draw(LEAVES[name] | st.sampled_from([0.1, 0.3, 0.01]))
    if name in LEAVES:
        return draw(LEAVES[name])
    if name in SCHEMA_LISTS:
        size = draw(st.integers(1, 3))
        return [draw_schema(draw, vocab, depth) for _ in range(size)]
    if name in SCHEMA_MAPS:
        names = draw(st.lists(st.sampled_from(SCHEMA_MAPS[name]), max_size=3, unique=True))
        return {key: draw_schema(draw, vocab, depth) for key in names}
    return draw_schema(draw, vocab, depth)


def draw_resource(draw: st.DrawFn, full: bool, resources: dict[str, Any], depth: int) -> str:
    """An embedded schema resource with its own `$id` and `$defs`, whose "#" refs point into
    it; kept in the root's `$defs` and referred to from where it is used (jsonschema 4.26
    resolves refs inside a resource met under not/if/oneOf against the root)."""
    name = f"r{len(resources)}"
    inner = Vocabulary(full, resources=None)
    body = draw_schema(draw, inner, depth)
    beside = draw_schema(draw, inner, 0)
    beside = beside if isinstance(beside, dict) else {}
    uri = f"urn:mcpkit:test:{name}"
    resources[name] = {**beside, "$id": uri, "$defs": {"inner": body}, "$ref": "#/$defs/inner"}
    return f"#/$defs/{name}"


@st.composite
def documents(draw: st.DrawFn, full: bool) -> Any:
    """A root schema with `$defs` d0..dN, each def referring only to earlier ones."""
    vocab = Vocabulary(full)
    defs: dict[str, Any] = {}
    for index in range(draw(st.integers(0, 3))):
        body = draw_schema(draw, vocab, 2)
        anchors = {"$anchor": f"a{index}", "$dynamicAnchor": f"d{index}"} if full else {}
        defs[f"d{index}"] = {**body, **anchors} if isinstance(body, dict) else body
        vocab.refs += (f"#/$defs/d{index}",)
        if full and isinstance(body, dict):
            vocab.refs += (f"#a{index}", f"urn:mcpkit:root#/$defs/d{index}")
            vocab.dynamic_refs += (f"#d{index}",)
    root = draw_schema(draw, vocab, 3)
    if not defs and not vocab.resources and draw(st.booleans()):
        return root
    root = root if isinstance(root, dict) else {"allOf": [root]}
    extra = {"$schema": DIALECT, "$vocabulary": {VOCABULARY: True}}
    extra |= {"$id": "urn:mcpkit:root"} if full else {}
    return {**root, **extra, "$defs": {**defs, **(vocab.resources or {})}}


@settings(max_examples=max(EXAMPLES // 10, 20), deadline=None)
@given(schema=documents(full=True) | documents(full=False))
def test_the_generator_writes_valid_2020_12_schemas(schema: Any) -> None:
    jsonschema.Draft202012Validator.check_schema(schema)  # 17 ms: not in every example below


def negated(schema: Any) -> Any:
    """A schema that holds exactly where `schema` does not: `schema` becomes an embedded
    resource (its "#" refs still point into it) under `not`. Ours rejects it only when ours
    found `schema` definitely valid, so the properties below check that direction too."""
    if not isinstance(schema, dict):
        return {"not": schema}
    resource = {"$id": "urn:mcpkit:negated", **schema}
    return {"$defs": {"schema": resource}, "not": {"$ref": "#/$defs/schema"}}


def verdicts(schema: Any, instances: list[Any]) -> Iterator[tuple[Any, Any, list[str], Any]]:
    """(document, value, our messages, jsonschema's verdict) for each value, under `schema`
    and under its negation. jsonschema's verdict is None where it raises Unresolvable: its
    unevaluated* lookup (jsonschema 4.26) resolves refs inside an embedded `$id` resource
    against the root."""
    for document in (schema, negated(schema)):
        full = jsonschema.Draft202012Validator(document)
        for instance in instances:
            try:
                theirs = full.is_valid(instance)
            except referencing.Unresolvable:
                theirs = None
            yield document, instance, schema_errors(document, instance), theirs


@SETTINGS
@given(schema=documents(full=True), instances=st.lists(values, min_size=1, max_size=5))
def test_what_ours_rejects_a_full_validator_rejects(schema: Any, instances: list[Any]) -> None:
    for document, instance, ours, theirs in verdicts(schema, instances):
        assert not (ours and theirs), (document, instance, ours)


@SETTINGS
@given(schema=documents(full=False), instances=st.lists(values, min_size=1, max_size=5))
def test_on_the_claimed_vocabulary_verdicts_agree(schema: Any, instances: list[Any]) -> None:
    for document, instance, ours, theirs in verdicts(schema, instances):
        assert (not ours) is theirs, (document, instance, ours)
