"""A small JSON Schema validator for what MCP puts in schemas: tool outputs and elicitation forms.

Why not the `jsonschema` package: it is not a dependency, and importing it costs about 100 ms
(more than all of `mcpkit.client`), for schemas that in practice use a small vocabulary —
what pydantic, zod and hand-written tool schemas emit. This module checks that vocabulary:

  type (one or a list; "integer" accepts 3.0, never True), enum, const, properties, required,
  additionalProperties, patternProperties, propertyNames, min/maxProperties, dependentRequired,
  dependentSchemas, items (a schema, or a list as in draft 7), prefixItems, additionalItems,
  min/maxItems, uniqueItems, contains with min/maxContains, minLength, maxLength, pattern,
  minimum, maximum, exclusiveMinimum, exclusiveMaximum (numbers, or draft 4 booleans),
  multipleOf, allOf, anyOf, oneOf, not, if/then/else, local $ref ("#", "#/$defs/...",
  "#/definitions/...", within an embedded `$id` resource too), and boolean schemas.
  `format` is checked only when asked (elicitation forms: email, uri, date, date-time).
  Annotations (title, default, contentEncoding, ...) and unknown keywords constrain nothing.

How it never rejects a value a full validator would accept: the verdict is three-valued.
What it cannot decide — unevaluatedProperties/Items, $dynamicRef, draft 7 `dependencies`, a $ref
it cannot resolve, a type name or format it does not know, a pattern Python cannot read — is
*undecided*, never a failure. A schema fails when one of its keywords definitely fails; `not`
of undecided is undecided, `anyOf`/`contains`/`if` with an undecided branch stay undecided
unless the definite branches settle it, `oneOf` is undecided unless two branches definitely
match; and undecided at the top accepts. So the validator may let an unusual value through,
but ignorance never turns into a rejection.

One deliberate leniency: `multipleOf` with a fractional step is checked with a relative
tolerance of 1e-9 (0.3 is a multiple of 0.1), where a float-exact validator rejects.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from mcpkit.client._jsonschema_values import (
    FORMATS,
    TYPE_TESTS,
    compiled,
    is_multiple,
    is_number,
    json_equal,
)

JSONSchema = dict[str, Any] | bool

_MAX_REF_DEPTH = 64
_UNITS = {"minProperties": "properties", "minItems": "items", "minLength": "characters"}
# Keywords of 2019-09/2020-12 (and draft 7's `dependencies`) that this module does not
# implement: where one of them could change the verdict, the verdict is undecided.
_UNDECIDED_KEYWORDS = frozenset(
    {"unevaluatedProperties", "unevaluatedItems", "$dynamicRef", "$recursiveRef", "dependencies"}
)


def schema_errors(
    schema: JSONSchema, instance: Any, *, check_formats: bool = False, limit: int = 10
) -> list[str]:
    """What is wrong with `instance` under `schema`: messages like "$.a: expected integer".

    An empty list means valid, or not decidable by this module (see the module docstring).
    At most `limit` messages are collected.
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


def _undecided(schema: dict[str, Any], instance: Any) -> bool:
    """Whether a keyword this module does not implement could change the verdict here."""
    for keyword in _UNDECIDED_KEYWORDS.intersection(schema):
        if keyword == "unevaluatedProperties":
            kind: type | tuple[type, ...] = dict
        elif keyword == "unevaluatedItems":
            kind = (list, tuple)
        else:
            return True
        # they only constrain a non-empty object/array, and `true` or `{}` not even that
        if isinstance(instance, kind) and instance and schema[keyword] not in (True, {}):
            return True
    return False


def _is_resource(schema: dict[str, Any]) -> bool:
    """Whether a subschema is an embedded resource: an `$id` that is more than a draft 7
    "#name" anchor."""
    identifier = schema.get("$id")
    return isinstance(identifier, str) and not identifier.startswith("#")


class _Checker:
    """Walks a schema over an instance: definite failures become messages in `errors`; a part
    it cannot decide sets `undecided` instead. The keywords of one schema, allOf, properties
    and items form a conjunction and are checked in place (one failure fails it); the
    combinators that negate or choose ask `verdict` of a probe checker and combine the three
    values (True valid, False invalid, None undecided)."""

    __slots__ = ("check_formats", "errors", "limit", "root", "undecided")

    def __init__(self, root: JSONSchema, check_formats: bool, limit: int) -> None:
        self.root = root  # the schema resource "#" refers to
        self.check_formats = check_formats
        self.limit = limit
        self.errors: list[str] = []
        self.undecided = False

    def fail(self, path: str, message: str) -> None:
        if len(self.errors) < self.limit:
            self.errors.append(f"{path}: {message}")

    def verdict(self, schema: Any, instance: Any, depth: int) -> bool | None:
        """Whether `instance` matches, without recording anything: None when undecided."""
        probe = _Checker(self.root, self.check_formats, 1)
        probe.check(schema, instance, "$", depth)
        if probe.errors:
            return False
        return None if probe.undecided else True

    def check(self, schema: Any, instance: Any, path: str, depth: int) -> None:
        if schema is True or len(self.errors) >= self.limit:
            return  # nothing to check, or nothing more to record: the verdict is already False
        if not isinstance(schema, dict):
            if schema is False:
                self.fail(path, "no value is allowed here")
            else:
                self.undecided = True  # not a schema
            return
        if schema is not self.root and "$id" in schema and _is_resource(schema):
            self.check_resource(schema, instance, path, depth)
            return
        if not _UNDECIDED_KEYWORDS.isdisjoint(schema) and _undecided(schema, instance):
            self.undecided = True
        if "$ref" in schema:
            self.check_ref(schema["$ref"], instance, path, depth)
        if "type" in schema:
            self.check_type(schema["type"], instance, path)
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

    def check_resource(self, schema: dict[str, Any], instance: Any, path: str, depth: int) -> None:
        """An embedded schema resource (`$id`): its "#" refs point into it, not the root."""
        outer, self.root = self.root, schema
        try:
            self.check(schema, instance, path, depth)
        finally:
            self.root = outer

    def check_ref(self, ref: Any, instance: Any, path: str, depth: int) -> None:
        target = self.resolve(ref) if isinstance(ref, str) and depth < _MAX_REF_DEPTH else None
        if target is None:
            self.undecided = True  # remote, an $anchor, unresolvable or too deep
        else:
            self.check(target, instance, path, depth + 1)

    def resolve(self, ref: str) -> JSONSchema | None:
        if ref == "#":
            return self.root
        if not ref.startswith("#/"):
            return None  # remote references are not fetched; "#name" anchors are not indexed
        node: Any = self.root
        for raw in ref[2:].split("/"):
            if node is not self.root and isinstance(node, dict) and _is_resource(node):
                return None  # the pointer crosses into another resource
            key = (unquote(raw) if "%" in raw else raw).replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and key in node:
                node = node[key]
            elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
                node = node[int(key)]
            else:
                return None
        return node if isinstance(node, dict | bool) else None

    def check_type(self, kind: Any, instance: Any, path: str) -> None:
        kinds = kind if isinstance(kind, list) else (kind,)
        unknown = False
        for name in kinds:
            test = TYPE_TESTS.get(name) if isinstance(name, str) else None
            if test is None:
                unknown = True  # a type name we cannot check
            elif test(instance):
                return
        if unknown:
            self.undecided = True
        else:
            expected = " or ".join(str(k) for k in kinds)
            self.fail(path, f"expected {expected}, got {describe(instance)}")

    def check_values(self, schema: dict[str, Any], instance: Any, path: str) -> None:
        if "const" in schema and not json_equal(instance, schema["const"]):
            self.fail(path, f"must be {schema['const']!r}")
        enum = schema.get("enum")
        if isinstance(enum, list) and not any(json_equal(instance, option) for option in enum):
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
        self.check_dependencies(schema, instance, path, depth)

    def check_dependencies(
        self, schema: dict[str, Any], instance: dict[str, Any], path: str, depth: int
    ) -> None:
        needed = schema.get("dependentRequired")
        if isinstance(needed, dict):
            for key, needs in needed.items():
                missing = [name for name in needs if name not in instance]
                if key in instance and missing:
                    self.fail(path, f"properties {missing!r} are required with {key!r}")
        dependent = schema.get("dependentSchemas")
        if isinstance(dependent, dict):
            for key, sub in dependent.items():
                if key in instance:
                    self.check(sub, instance, path, depth)

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
            regex = compiled(pattern)
            if regex is None:
                self.undecided = True  # does it match? then additionalProperties may not apply
            elif regex.search(key):
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
                if any(json_equal(value, earlier) for earlier in instance[:index]):
                    self.fail(path, f"items must be unique; {value!r} repeats")
                    break
        if "contains" in schema:
            self.check_contains(schema, instance, path, depth)

    def check_contains(
        self, schema: dict[str, Any], instance: list[Any] | tuple[Any, ...], path: str, depth: int
    ) -> None:
        contains = schema["contains"]
        low = schema.get("minContains", 1)
        low = low if is_number(low) else 1
        high = schema.get("maxContains")
        high = high if is_number(high) else None
        matched = unsure = 0
        for value in instance:
            verdict = self.verdict(contains, value, depth)
            if verdict:
                matched += 1
                if high is None and matched >= low:
                    return
            elif verdict is None:
                unsure += 1
        if high is not None and matched > high:
            self.fail(path, f"allows at most {high} items matching 'contains', has {matched}")
        elif matched + unsure < low:
            if matched == 0 and low == 1:
                self.fail(path, "no item matches the 'contains' schema")
            else:
                self.fail(path, f"needs at least {low} items matching 'contains', has {matched}")
        elif matched < low or (high is not None and matched + unsure > high):
            self.undecided = True

    def check_string(self, schema: dict[str, Any], instance: str, path: str) -> None:
        self.check_size(schema, len(instance), path, ("minLength", "maxLength"))
        pattern = schema.get("pattern")
        if isinstance(pattern, str):
            regex = compiled(pattern)
            if regex is None:
                self.undecided = True
            elif not regex.search(instance):
                self.fail(path, f"does not match the pattern {pattern!r}")
        fmt = schema.get("format")
        if self.check_formats and isinstance(fmt, str):
            test = FORMATS.get(fmt)
            if test is None:
                self.undecided = True  # a format we cannot check
            elif not test(instance):
                self.fail(path, f"{instance!r} is not a valid {fmt}")

    def check_number(self, schema: dict[str, Any], value: float, path: str) -> None:
        low, high = schema.get("minimum"), schema.get("maximum")
        ex_low, ex_high = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
        if ex_low is True:  # draft 4: a flag on minimum
            ex_low, low = low, None
        if ex_high is True:
            ex_high, high = high, None
        if is_number(low) and value < low:
            self.fail(path, f"must be at least {low}, got {value}")
        if is_number(high) and value > high:
            self.fail(path, f"must be at most {high}, got {value}")
        if is_number(ex_low) and value <= ex_low:
            self.fail(path, f"must be greater than {ex_low}, got {value}")
        if is_number(ex_high) and value >= ex_high:
            self.fail(path, f"must be less than {ex_high}, got {value}")
        step = schema.get("multipleOf")
        if is_number(step) and step > 0 and not is_multiple(value, step):
            self.fail(path, f"must be a multiple of {step}, got {value}")

    def check_size(
        self, schema: dict[str, Any], size: int, path: str, keys: tuple[str, str]
    ) -> None:
        low, high = schema.get(keys[0]), schema.get(keys[1])
        unit = _UNITS[keys[0]]
        if is_number(low) and size < low:
            self.fail(path, f"needs at least {low} {unit}, has {size}")
        if is_number(high) and size > high:
            self.fail(path, f"allows at most {high} {unit}, has {size}")

    def check_combinators(
        self, schema: dict[str, Any], instance: Any, path: str, depth: int
    ) -> None:
        for sub in schema.get("allOf") or ():
            self.check(sub, instance, path, depth)
        any_of = schema.get("anyOf")
        if isinstance(any_of, list):
            self.check_any_of(any_of, instance, path, depth)
        one_of = schema.get("oneOf")
        if isinstance(one_of, list):
            self.check_one_of(one_of, instance, path, depth)
        if "not" in schema:
            verdict = self.verdict(schema["not"], instance, depth)
            if verdict:
                self.fail(path, "matches a schema it must not match (not)")
            elif verdict is None:
                self.undecided = True
        if "if" in schema and ("then" in schema or "else" in schema):
            self.check_condition(schema, instance, path, depth)

    def check_any_of(self, options: list[Any], instance: Any, path: str, depth: int) -> None:
        unsure = False
        for option in options:
            verdict = self.verdict(option, instance, depth)
            if verdict:
                return
            unsure = unsure or verdict is None
        if unsure:
            self.undecided = True
        elif _all_consts(options):
            self.fail(path, f"must be one of {_consts(options)!r}, got {instance!r}")
        else:
            self.fail(path, f"matches none of the {len(options)} allowed shapes (anyOf)")

    def check_one_of(self, options: list[Any], instance: Any, path: str, depth: int) -> None:
        verdicts = [self.verdict(option, instance, depth) for option in options]
        matches = verdicts.count(True)
        if matches == 1 and None not in verdicts:
            return
        if matches < 2 and None in verdicts:
            self.undecided = True  # an undecided branch could make it exactly one
        elif _all_consts(options):
            self.fail(path, f"must be one of {_consts(options)!r}, got {instance!r}")
        else:
            self.fail(path, f"matches {matches} of the oneOf shapes; exactly 1 is needed")

    def check_condition(self, schema: dict[str, Any], instance: Any, path: str, depth: int) -> None:
        verdict = self.verdict(schema["if"], instance, depth)
        if verdict is not None:
            branch = "then" if verdict else "else"
            if branch in schema:
                self.check(schema[branch], instance, path, depth)
            return
        # `if` undecided: the value must pass whichever branch applies
        then = self.verdict(schema.get("then", True), instance, depth)
        otherwise = self.verdict(schema.get("else", True), instance, depth)
        if then is False and otherwise is False:
            self.check(schema["then"], instance, path, depth)  # fails either way
        elif not (then and otherwise):
            self.undecided = True


def _all_consts(options: list[Any]) -> bool:
    return bool(options) and all(isinstance(s, dict) and "const" in s for s in options)


def _consts(options: list[Any]) -> list[Any]:
    return [s["const"] for s in options]
