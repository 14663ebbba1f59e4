"""Arguments as the advertised inputSchema accepts them, on the slow path only.

How this works: a tool's arguments are checked by the fast exact-type checks of `schema`
(plain path) or by pydantic in strict mode (`typed`). Both differ from JSON Schema in small
ways: JSON Schema counts a number with a zero fraction (3.0) as an integer and compares
numbers by value in `enum`/`const` (3.0 equals 3), while it never counts true as 1 -- and
pydantic's Enums and Literals do (True == 1 in Python) -- and refuses duplicates in an array
with `uniqueItems`, which pydantic's sets silently drop. A client that validates against the
inputSchema we advertise must get the same answer from the server, so:

- plain path: when an exact-type check fails, `conform` walks the parameter's own schema and
  gives the value that schema accepts, an integral float becoming the int the annotation
  asks for;
- typed path: when pydantic refuses, `integral_floats` finds the integral floats it refused
  and `with_values` puts ints in their place for one more strict validation; when it
  accepts arguments where pydantic is known to be more lenient (`pydantic_gaps`, read at
  registration: numbers or booleans listed in an `enum`/`const`, `uniqueItems`), `conform`
  checks them against the whole schema.

`conform` understands the keywords that decide a value's type and choices (type, enum,
const, $ref, anyOf, oneOf, allOf, properties, required, additionalProperties, items,
prefixItems, uniqueItems) and lets every other keyword (bounds, patterns, formats) pass:
those are pydantic's to check. The common case, arguments of the right types, never comes
here.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from mcpkit.errors import MCPError

JSONObject = dict[str, Any]
Schema = JSONObject | bool


class Refused(MCPError, ValueError):
    """The value does not fit the schema."""


def conform(schema: Schema, value: Any, root: Schema | None = None) -> Any:
    """`value` as `schema` accepts it (integral floats where integers are wanted made ints;
    an enum member given as an equal number replaced by the member). `root` is the whole
    schema, where `$ref`s point (default: `schema`).

    Raises Refused when JSON Schema would refuse it.
    """
    root = schema if root is None else root
    if not isinstance(schema, dict):
        if schema is False:
            raise Refused
        return value
    ref = schema.get("$ref")
    if isinstance(ref, str):
        value = conform(_resolve(ref, root), value, root)
    for branch in schema.get("allOf", ()):
        value = conform(branch, value, root)
    for key in ("anyOf", "oneOf"):  # oneOf as anyOf: pydantic checks exclusivity itself
        if key in schema:
            value = _first_fit(schema[key], value, root)
    if "enum" in schema:
        value = _member(schema["enum"], value)
    if "const" in schema:
        value = _member([schema["const"]], value)
    kind = schema.get("type")
    if kind is not None:
        value = _of_type(kind if isinstance(kind, list) else [kind], value)
    if type(value) is list:  # array keywords apply to arrays, whatever "type" says
        return _array(schema, value, root)
    if type(value) is dict:
        return _object(schema, value, root)
    return value


def _resolve(ref: str, root: Schema) -> Schema:
    """The schema a local `$ref` ("#/$defs/Name") points to; any other passes everything."""
    if not ref.startswith("#"):
        return True
    node: Any = root
    for part in filter(None, ref[1:].split("/")):
        node = node.get(part.replace("~1", "/").replace("~0", "~"), True)
        if not isinstance(node, dict):
            return True
    return node if isinstance(node, dict | bool) else True


def _first_fit(members: list[Schema], value: Any, root: Schema) -> Any:
    for member in members:
        try:
            return conform(member, value, root)
        except Refused:
            continue
    raise Refused


def _member(options: list[Any], value: Any) -> Any:
    for option in options:
        if json_equal(option, value):
            return option
    raise Refused("not one of the allowed values (true is not 1, nor 1 true)")


def _of_type(kinds: list[str], value: Any) -> Any:
    """`value` if it is of one of the JSON types `kinds` (an integral float made an int for
    "integer"). Raises Refused."""
    for kind in kinds:
        if kind == "integer" and type(value) is float and value.is_integer():
            return int(value)
        if type(value) in _TYPES.get(kind, ()):
            return value
    raise Refused(f"expected {' or '.join(kinds)}")


_TYPES: dict[str, tuple[type, ...]] = {
    "integer": (int,),
    "number": (int, float),
    "string": (str,),
    "boolean": (bool,),
    "null": (type(None),),
    "array": (list,),
    "object": (dict,),
}


def _array(schema: JSONObject, value: list[Any], root: Schema) -> list[Any]:
    prefix = schema.get("prefixItems", [])
    items = schema.get("items", True)
    found = [
        conform(prefix[index] if index < len(prefix) else items, item, root)
        for index, item in enumerate(value)
    ]
    if schema.get("uniqueItems") is True and len({_key(item) for item in found}) < len(found):
        raise Refused("the items must be unique")
    return found


def _object(schema: JSONObject, value: JSONObject, root: Schema) -> JSONObject:
    if any(name not in value for name in schema.get("required", ())):
        raise Refused("a required field is missing")
    properties = schema.get("properties", {})
    extra = schema.get("additionalProperties", True)
    if "patternProperties" in schema:
        extra = True  # patterns are not matched here: let pydantic decide
    return {key: conform(properties.get(key, extra), item, root) for key, item in value.items()}


def pydantic_gaps(schema: Any) -> frozenset[str]:
    """Where in `schema` pydantic may accept what JSON Schema refuses, read once at
    registration: "number" (an `enum`/`const` lists a number: Python's True == 1 lets a
    boolean pass), "boolean" (one lists a boolean: 1 passes for True), "uniqueItems" (a set
    parameter: pydantic drops duplicates that JSON Schema refuses)."""
    if isinstance(schema, list):
        return frozenset().union(*(pydantic_gaps(item) for item in schema))
    if not isinstance(schema, dict):
        return frozenset()
    choices = list(schema.get("enum", ())) + ([schema["const"]] if "const" in schema else [])
    found = {"boolean" if type(c) is bool else "number" for c in choices if type(c) in _SCALAR}
    if schema.get("uniqueItems") is True:
        found.add("uniqueItems")
    return frozenset(found).union(*(pydantic_gaps(item) for item in schema.values()))


_SCALAR = (bool, int, float)


def _key(value: Any) -> Any:
    """A hashable key equal for values JSON Schema counts as equal (3 and 3.0, not true and
    1), for `uniqueItems`."""
    kind = type(value)
    if kind is list:
        return ("array", tuple(_key(item) for item in value))
    if kind is dict:
        return ("object", frozenset((name, _key(item)) for name, item in value.items()))
    if kind in (int, float):
        return ("number", value)  # 3 == 3.0 and hash(3) == hash(3.0)
    return (kind.__name__, value)


def json_equal(a: Any, b: Any) -> bool:
    """Equality as JSON Schema's enum and const see it: numbers by value (3 equals 3.0),
    booleans never equal to numbers, arrays and objects item by item."""
    return bool(_key(a) == _key(b))


# -- the typed path ---------------------------------------------------------------------------


def integral_floats(arguments: JSONObject, locations: Iterable[tuple[Any, ...]]) -> list[list[Any]]:
    """The data paths, among pydantic's error `locations`, that hold an integral float.

    A location may name union members ("int", a model's name) between the keys and indexes
    of the data: whatever is not a key or an index of the value reached is skipped.
    """
    found: list[list[Any]] = []
    for location in locations:
        node: Any = arguments
        path: list[Any] = []
        for part in location:
            if (type(node) is dict and part in node) or (
                type(node) is list and type(part) is int and 0 <= part < len(node)
            ):
                node = node[part]
                path.append(part)
        if type(node) is float and node.is_integer() and path not in found:
            found.append(path)
    return found


def with_values(arguments: JSONObject, paths: list[list[Any]]) -> JSONObject:
    """A copy of `arguments` with each path's integral float made an int (containers along
    the paths copied, the caller's arguments untouched)."""
    result: Any = arguments
    for path in paths:
        result = _replaced(result, path)
    return dict(result)


def _replaced(node: Any, path: list[Any]) -> Any:
    if not path:
        return int(node)
    head, rest = path[0], path[1:]
    copy = dict(node) if type(node) is dict else list(node)
    copy[head] = _replaced(node[head], rest)
    return copy
