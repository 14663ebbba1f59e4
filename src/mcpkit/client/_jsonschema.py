"""A small JSON Schema validator for what MCP puts in schemas: tool outputs and elicitation forms.

Why not the `jsonschema` package: it is not a dependency, and importing it costs about 100 ms
(more than all of `mcpkit.client`), for schemas that in practice use a small vocabulary —
what pydantic, zod and hand-written tool schemas emit. This module checks that vocabulary:

  type (one or a list; "integer" accepts 3.0, never True), enum, const, properties, required,
  additionalProperties, patternProperties, propertyNames, min/maxProperties, dependentRequired,
  items (a schema, or a list as in draft 7), prefixItems, additionalItems, min/maxItems,
  uniqueItems, contains, minLength, maxLength, pattern, minimum, maximum, exclusiveMinimum,
  exclusiveMaximum (numbers, or draft 4 booleans), multipleOf, allOf, anyOf, oneOf, not,
  if/then/else, local $ref ("#", "#/$defs/...", "#/definitions/..."), and boolean schemas.
  `format` is checked only when asked (elicitation forms: email, uri, date, date-time).

A keyword it does not know is ignored, as is a $ref it cannot resolve: the validator may let
an unusual schema through, but it never rejects a value a full validator would accept.
"""

from __future__ import annotations

import datetime
import math
import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any, TypeGuard
from urllib.parse import urlsplit

JSONSchema = dict[str, Any] | bool

_MAX_REF_DEPTH = 64
_UNITS = {"minProperties": "properties", "minItems": "items", "minLength": "characters"}


def schema_errors(
    schema: JSONSchema, instance: Any, *, check_formats: bool = False, limit: int = 10
) -> list[str]:
    """What is wrong with `instance` under `schema`: messages like "$.a: expected integer".

    An empty list means valid. At most `limit` messages are collected.
    """
    checker = _Checker(schema, check_formats, limit)
    checker.check(schema, instance, "$", 0)
    return checker.errors


_TYPE_NAMES: tuple[tuple[type | tuple[type, ...], str], ...] = (
    (type(None), "null"),
    (bool, "boolean"),
    (int, "integer"),
    (float, "number"),
    (str, "string"),
    ((list, tuple), "array"),
    (dict, "object"),
)


def describe(value: Any) -> str:
    """A JSON type name for a Python value, for messages."""
    for kinds, name in _TYPE_NAMES:
        if isinstance(value, kinds):
            return name
    return type(value).__name__


def _number(value: Any) -> TypeGuard[float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _integer(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (
        isinstance(value, float) and math.isfinite(value) and value.is_integer()
    )


_TYPE_TESTS: dict[str, Callable[[Any], bool]] = {
    "string": lambda value: isinstance(value, str),
    "integer": _integer,
    "number": _number,
    "boolean": lambda value: isinstance(value, bool),
    "object": lambda value: isinstance(value, dict),
    "array": lambda value: isinstance(value, list | tuple),
    "null": lambda value: value is None,
}


def _is_type(value: Any, kind: str) -> bool:
    test = _TYPE_TESTS.get(kind)
    return test is None or test(value)  # an unknown type name constrains nothing we can check


def _equal(a: Any, b: Any) -> bool:
    """JSON equality: 1 == 1.0, but True != 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    return bool(a == b)


@lru_cache(maxsize=256)
def _regex(pattern: str) -> re.Pattern[str] | None:
    try:
        return re.compile(pattern)
    except re.error:
        return None  # an ECMA-262 pattern Python cannot read: not checked


_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


def _valid_date_time(text: str) -> bool:
    try:
        datetime.datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return False
    return "T" in text.upper()


def _valid_date(text: str) -> bool:
    try:
        datetime.date.fromisoformat(text)
    except ValueError:
        return False
    return len(text) == 10


def _valid_uri(text: str) -> bool:
    parts = urlsplit(text)
    return bool(parts.scheme) and bool(parts.netloc or parts.path) and " " not in text


_FORMATS: dict[str, Callable[[str], bool]] = {
    "email": lambda text: _EMAIL.match(text) is not None,
    "uri": _valid_uri,
    "date": _valid_date,
    "date-time": _valid_date_time,
}


class _Checker:
    def __init__(self, root: JSONSchema, check_formats: bool, limit: int) -> None:
        self.root = root
        self.check_formats = check_formats
        self.limit = limit
        self.errors: list[str] = []

    def fail(self, path: str, message: str) -> None:
        if len(self.errors) < self.limit:
            self.errors.append(f"{path}: {message}")

    def valid(self, schema: JSONSchema, instance: Any, depth: int) -> bool:
        """Whether `instance` matches, without recording anything (for anyOf/oneOf/not/if)."""
        probe = _Checker(self.root, self.check_formats, 1)
        probe.check(schema, instance, "$", depth)
        return not probe.errors

    def check(self, schema: JSONSchema, instance: Any, path: str, depth: int) -> None:
        if schema is False:
            self.fail(path, "no value is allowed here")
            return
        if not isinstance(schema, dict):
            return  # True, or something that is not a schema
        ref = schema.get("$ref")
        if isinstance(ref, str) and depth < _MAX_REF_DEPTH:
            target = self.resolve(ref)
            if target is not None:
                self.check(target, instance, path, depth + 1)
        self.check_type(schema, instance, path)
        self.check_values(schema, instance, path)
        if isinstance(instance, dict):
            self.check_object(schema, instance, path, depth)
        elif isinstance(instance, list | tuple):
            self.check_array(schema, instance, path, depth)
        elif isinstance(instance, str):
            self.check_string(schema, instance, path)
        elif isinstance(instance, int | float) and not isinstance(instance, bool):
            self.check_number(schema, instance, path)
        self.check_combinators(schema, instance, path, depth)

    def resolve(self, ref: str) -> JSONSchema | None:
        if not ref.startswith("#"):
            return None  # remote references are not fetched
        node: Any = self.root
        for raw in ref[1:].split("/")[1:] if ref != "#" else []:
            key = raw.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and key in node:
                node = node[key]
            elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
                node = node[int(key)]
            else:
                return None
        return node if isinstance(node, dict | bool) else None

    def check_type(self, schema: dict[str, Any], instance: Any, path: str) -> None:
        kind = schema.get("type")
        if kind is None:
            return
        kinds = kind if isinstance(kind, list) else [kind]
        if not any(_is_type(instance, k) for k in kinds if isinstance(k, str)):
            expected = " or ".join(str(k) for k in kinds)
            self.fail(path, f"expected {expected}, got {describe(instance)}")

    def check_values(self, schema: dict[str, Any], instance: Any, path: str) -> None:
        if "const" in schema and not _equal(instance, schema["const"]):
            self.fail(path, f"must be {schema['const']!r}")
        enum = schema.get("enum")
        if isinstance(enum, list) and not any(_equal(instance, option) for option in enum):
            self.fail(path, f"must be one of {enum!r}, got {instance!r}")

    def check_object(
        self, schema: dict[str, Any], instance: dict[str, Any], path: str, depth: int
    ) -> None:
        for name in schema.get("required") or ():
            if name not in instance:
                self.fail(path, f"missing required property {name!r}")
        names = schema.get("propertyNames")
        for key, value in instance.items():
            self.check_property(schema, key, value, path, depth)
            if names is not None:
                self.check(names, key, f"{path} (property name {key!r})", depth)
        self.check_size(schema, len(instance), path, ("minProperties", "maxProperties"))
        dependent = schema.get("dependentRequired")
        if isinstance(dependent, dict):
            for key, needs in dependent.items():
                missing = [name for name in needs if name not in instance]
                if key in instance and missing:
                    self.fail(path, f"properties {missing!r} are required with {key!r}")

    def check_property(
        self, schema: dict[str, Any], key: str, value: Any, path: str, depth: int
    ) -> None:
        where = f"{path}.{key}"
        properties = schema.get("properties")
        matched = isinstance(properties, dict) and key in properties
        if matched:
            self.check(properties[key], value, where, depth)  # type: ignore[index]
        patterns = schema.get("patternProperties")
        for pattern, sub in patterns.items() if isinstance(patterns, dict) else ():
            regex = _regex(pattern)
            if regex is not None and regex.search(key):
                matched = True
                self.check(sub, value, where, depth)
        extra = schema.get("additionalProperties", True)
        if not matched:
            if extra is False:
                self.fail(path, f"unexpected property {key!r}")
            elif isinstance(extra, dict):
                self.check(extra, value, where, depth)

    def check_array(
        self, schema: dict[str, Any], instance: list[Any] | tuple[Any, ...], path: str, depth: int
    ) -> None:
        prefix = schema.get("prefixItems")
        items = schema.get("items")
        if isinstance(items, list):  # draft 7 tuple form
            prefix, items = items, schema.get("additionalItems")
        start = 0
        if isinstance(prefix, list):
            for index, (sub, value) in enumerate(zip(prefix, instance, strict=False)):
                self.check(sub, value, f"{path}[{index}]", depth)
            start = len(prefix)
        if isinstance(items, dict | bool):
            for index in range(start, len(instance)):
                self.check(items, instance[index], f"{path}[{index}]", depth)
        self.check_size(schema, len(instance), path, ("minItems", "maxItems"))
        if schema.get("uniqueItems") is True:
            for index, value in enumerate(instance):
                if any(_equal(value, earlier) for earlier in instance[:index]):
                    self.fail(path, f"items must be unique; {value!r} repeats")
                    break
        contains = schema.get("contains")
        if contains is not None and not any(self.valid(contains, v, depth) for v in instance):
            self.fail(path, "no item matches the 'contains' schema")

    def check_string(self, schema: dict[str, Any], instance: str, path: str) -> None:
        self.check_size(schema, len(instance), path, ("minLength", "maxLength"))
        pattern = schema.get("pattern")
        if isinstance(pattern, str):
            regex = _regex(pattern)
            if regex is not None and not regex.search(instance):
                self.fail(path, f"does not match the pattern {pattern!r}")
        fmt = schema.get("format")
        if self.check_formats and isinstance(fmt, str):
            test = _FORMATS.get(fmt)
            if test is not None and not test(instance):
                self.fail(path, f"{instance!r} is not a valid {fmt}")

    def check_number(self, schema: dict[str, Any], value: float, path: str) -> None:
        low, high = schema.get("minimum"), schema.get("maximum")
        ex_low, ex_high = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
        if ex_low is True:  # draft 4: a flag on minimum
            ex_low, low = low, None
        if ex_high is True:
            ex_high, high = high, None
        if _number(low) and value < low:
            self.fail(path, f"must be at least {low}, got {value}")
        if _number(high) and value > high:
            self.fail(path, f"must be at most {high}, got {value}")
        if _number(ex_low) and value <= ex_low:
            self.fail(path, f"must be greater than {ex_low}, got {value}")
        if _number(ex_high) and value >= ex_high:
            self.fail(path, f"must be less than {ex_high}, got {value}")
        step = schema.get("multipleOf")
        if _number(step) and step > 0:
            quotient = value / step
            if not math.isclose(quotient, round(quotient), rel_tol=1e-9, abs_tol=1e-9):
                self.fail(path, f"must be a multiple of {step}, got {value}")

    def check_size(
        self, schema: dict[str, Any], size: int, path: str, keys: tuple[str, str]
    ) -> None:
        low, high = schema.get(keys[0]), schema.get(keys[1])
        unit = _UNITS[keys[0]]
        if _number(low) and size < low:
            self.fail(path, f"needs at least {low} {unit}, has {size}")
        if _number(high) and size > high:
            self.fail(path, f"allows at most {high} {unit}, has {size}")

    def check_combinators(
        self, schema: dict[str, Any], instance: Any, path: str, depth: int
    ) -> None:
        for sub in schema.get("allOf") or ():
            self.check(sub, instance, path, depth)
        any_of = schema.get("anyOf")
        if isinstance(any_of, list) and not any(self.valid(s, instance, depth) for s in any_of):
            if _all_consts(any_of):
                self.fail(path, f"must be one of {_consts(any_of)!r}, got {instance!r}")
            else:
                self.fail(path, f"matches none of the {len(any_of)} allowed shapes (anyOf)")
        one_of = schema.get("oneOf")
        if isinstance(one_of, list):
            matches = sum(1 for s in one_of if self.valid(s, instance, depth))
            if matches != 1:
                if _all_consts(one_of):
                    self.fail(path, f"must be one of {_consts(one_of)!r}, got {instance!r}")
                else:
                    self.fail(path, f"matches {matches} of the oneOf shapes; exactly 1 is needed")
        if "not" in schema and self.valid(schema["not"], instance, depth):
            self.fail(path, "matches a schema it must not match (not)")
        if "if" in schema:
            branch = "then" if self.valid(schema["if"], instance, depth) else "else"
            if branch in schema:
                self.check(schema[branch], instance, path, depth)


def _all_consts(options: list[Any]) -> bool:
    return bool(options) and all(isinstance(s, dict) and "const" in s for s in options)


def _consts(options: list[Any]) -> list[Any]:
    return [s["const"] for s in options]
