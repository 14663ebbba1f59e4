"""Function signature -> JSON Schema for its arguments (and its return value), plus validators.

How this works. Each parameter annotation is first tried on the *plain* path: JSON's own
types (str, int, float, bool, None, Any, list, dict with str keys, Literal of JSON values,
unions of these). Those get a hand-rolled schema and checker, so a cheap tool call costs a
microsecond or two and a stdio server never imports pydantic. As soon as one parameter needs
more — a pydantic model, dataclass, TypedDict, Enum, datetime/date/time, UUID, tuple, set,
`Annotated[..., Field(...)]` or any other metadata — the whole signature goes to the *typed*
path (`mcpkit.server.typed`): pydantic, imported then and only then, validates the arguments
and converts them to the annotated types (a model parameter receives a model instance).

Both paths check arguments as JSON: a string is not an integer, 1 is not true. As in JSON
Schema, a number with a zero fraction is an integer (an `int` parameter given 3.0 receives
3); that second look (`conform`) runs only when the fast exact-type check fails. Unknown
arguments are dropped, not passed on. Return annotations get the same treatment in
`describe_output`.

Parameter descriptions come from `Annotated[T, pydantic.Field(description=...)]` (typed
path) or, at no cost, from the docstring's Args/Parameters/:param: section.

`Annotated[T, Header("Name")]` mirrors a parameter into an HTTP header (2026-07-28): the
property gets `"x-mcp-header": "Name"`; the marker itself costs nothing on either path.
"""

from __future__ import annotations

import collections.abc
import inspect
import sys
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from mcpkit.server.arguments import EMPTY, InvalidArguments
from mcpkit.server.conform import Refused, conform

JSONObject = dict[str, Any]
Check = Callable[[Any], bool]
Plain = tuple[JSONObject, Check]

_SCALARS: dict[Any, tuple[str, Check]] = {
    str: ("string", lambda v: type(v) is str),
    int: ("integer", lambda v: type(v) is int),
    float: ("number", lambda v: type(v) in (int, float)),
    bool: ("boolean", lambda v: type(v) is bool),
    type(None): ("null", lambda v: v is None),
}
_JSON_VALUES = (str, int, float, bool, type(None))


def _any(value: Any) -> bool:
    return True


@dataclass(frozen=True, slots=True)
class Header:
    """Marks a tool parameter to be mirrored into an HTTP header (Streamable HTTP,
    2026-07-28): `region: Annotated[str, Header("Region")]` puts `"x-mcp-header": "Region"`
    in that property's schema, and clients send the value as `Mcp-Param-Region` so proxies
    and load balancers can route on it without reading the body.

    Only for string, integer and boolean parameters; the names must be HTTP tokens, unique
    (case-insensitively) within a tool. Mind that header values are visible to every
    intermediary: never mark secrets or personal data. A bad annotation fails when the tool
    is registered (ValueError).
    """

    name: str


def split_header(annotation: Any) -> tuple[Any, str | None]:
    """(`annotation` without its `Header` marker, the header name or None)."""
    if typing.get_origin(annotation) is not typing.Annotated:
        return annotation, None
    base, *metadata = typing.get_args(annotation)
    headers = [m for m in metadata if isinstance(m, Header)]
    if not headers:
        return annotation, None
    if len(headers) > 1:
        raise ValueError(f"one Header per parameter (got {', '.join(h.name for h in headers)})")
    rest = [m for m in metadata if not isinstance(m, Header)]
    return (typing.Annotated[(base, *rest)] if rest else base), headers[0].name


@dataclass(frozen=True, slots=True)
class Parameter:
    name: str
    schema: JSONObject
    check: Check
    required: bool
    types: frozenset[type] | None = None  # set when the check is just "type(value) in types"


@dataclass(frozen=True, slots=True)
class Signature:
    """What a function accepts: its JSON Schema and a validator for incoming arguments.

    `bind(arguments)` is the one entry point: JSON arguments in, the keyword arguments for
    the function out (unknown ones dropped; converted to the annotated types on the typed
    path). Raises InvalidArguments.
    """

    parameters: tuple[Parameter, ...]
    input_schema: JSONObject
    names: frozenset[str]
    bind: Callable[[JSONObject], JSONObject]

    def problems(self, arguments: JSONObject) -> list[str]:
        """One message per bad or missing argument; empty when all is well."""
        try:
            self.bind(arguments)
        except InvalidArguments as exc:
            return exc.problems
        return []


def _plain_binder(
    parameters: tuple[Parameter, ...], names: frozenset[str]
) -> Callable[[JSONObject], JSONObject]:
    specs = tuple((p.name, p.types, p.check, p.required) for p in parameters)

    def bind(arguments: JSONObject) -> JSONObject:
        for name, types_, check, required in specs:
            if name in arguments:
                value = arguments[name]
                if (type(value) in types_) if types_ is not None else check(value):
                    continue
                return _conformed(parameters, arguments)  # 3.0 for an integer, or wrong
            if required:
                return _conformed(parameters, arguments)  # raises, naming what is missing
        if names.issuperset(arguments):
            return arguments
        return {name: value for name, value in arguments.items() if name in names}

    return bind


def _conformed(parameters: tuple[Parameter, ...], arguments: JSONObject) -> JSONObject:
    """The slow path of `bind`, after an exact-type check failed or a required argument is
    missing: the arguments as the parameters' schemas accept them (`conform`: 3.0 for an
    integer becomes 3). Raises InvalidArguments with one problem per bad argument."""
    found: JSONObject = {}
    problems: list[str] = []
    for parameter in parameters:
        name = parameter.name
        if name in arguments:
            try:
                found[name] = conform(parameter.schema, arguments[name])
            except Refused:
                problems.append(f"{name}: {mismatch(parameter.schema, arguments[name])}")
        elif parameter.required:
            problems.append(f"{name}: required argument missing")
    if problems:
        raise InvalidArguments(problems)
    return found


def mismatch(schema: JSONObject, value: Any) -> str:
    expected = schema.get("type") or (
        "one of " + repr(schema["enum"]) if "enum" in schema else None
    )
    return f"expected {expected or 'a valid value'}, got {type(value).__name__}"


# -- building a signature -------------------------------------------------------------------


def describe(
    fn: Callable[..., Any],
    skip: frozenset[str] = frozenset(),
    *,
    hints: dict[str, Any],
    docs: dict[str, str] | None = None,
) -> Signature:
    """Build the argument schema of `fn` from its resolved annotations (`hints`, from
    `hints.resolve_hints`), defaults and `docs`.

    Raises TypeError for a signature no JSON Schema can describe (positional-only parameters,
    an annotation pydantic does not understand), ValueError for two `Header`s on a parameter.
    """
    docs = docs or {}
    taken = []
    headers: dict[str, str] = {}
    for name, param in inspect.signature(fn).parameters.items():
        if name in skip or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        if param.kind is param.POSITIONAL_ONLY:
            raise TypeError(f"parameter {name!r} is positional-only; tools take keyword arguments")
        annotation = hints.get(name, Any)
        if isinstance(annotation, str):
            raise TypeError(
                f"cannot evaluate the annotation {annotation!r} of parameter {name!r}: import "
                "the names it uses at module level (or avoid `from __future__ import annotations`)"
            )
        annotation, header = split_header(annotation)
        if header is not None:
            headers[name] = header
        taken.append((name, annotation, param.default))
    plain = [schema_for(annotation) for _, annotation, default in taken]
    if any(p is None for p in plain) or any(_is_field(d) for _, _, d in taken):
        from mcpkit.server.typed import typed_signature

        input_schema, convert = typed_signature(getattr(fn, "__name__", "tool"), taken, docs)
        names = frozenset(name for name, _, _ in taken)
        signature = Signature((), input_schema, names, convert)
    else:
        signature = _plain_signature(taken, plain, docs)  # type: ignore[arg-type]
    properties = signature.input_schema.get("properties", {})
    for name, header in headers.items():
        if name in properties:
            properties[name] = _header_property(properties[name], header)
    return signature


def _header_property(schema: JSONObject, header: str) -> JSONObject:
    """A mirrored parameter's property: an optional primitive (`int | None`) is described as
    the primitive itself, since clients accept `x-mcp-header` only on a plain string, integer
    or boolean `type` (a null argument sends no header either way)."""
    options = schema.get("anyOf")
    if isinstance(options, list) and len(options) == 2 and {"type": "null"} in options:
        (kept,) = [o for o in options if o != {"type": "null"}]
        if set(kept) == {"type"}:
            schema = {**{k: v for k, v in schema.items() if k != "anyOf"}, **kept}
    return {**schema, "x-mcp-header": header}


def _plain_signature(
    taken: list[tuple[str, Any, Any]], plain: list[Plain], docs: dict[str, str]
) -> Signature:
    parameters = []
    properties: JSONObject = {}
    required = []
    for (name, _, default), (base, check) in zip(taken, plain, strict=True):
        schema = dict(base)
        if docs.get(name):
            schema["description"] = docs[name]
        if default is not EMPTY and _jsonable(default):
            schema["default"] = default
        properties[name] = schema
        if default is EMPTY:
            required.append(name)
        parameters.append(Parameter(name, schema, check, default is EMPTY, _types(base)))
    input_schema: JSONObject = {"type": "object", "properties": properties}
    if required:
        input_schema["required"] = required
    names = frozenset(p.name for p in parameters)
    return Signature(
        tuple(parameters), input_schema, names, _plain_binder(tuple(parameters), names)
    )


_TYPES = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
}


def _types(schema: JSONObject) -> frozenset[type] | None:
    """The exact types a scalar schema (or a union of scalars) accepts; None for others."""
    members = schema.get("anyOf", [schema])
    if not members or any(set(m) != {"type"} or m["type"] not in _TYPES for m in members):
        return None
    return frozenset(t for m in members for t in _TYPES[m["type"]])


def _is_field(default: Any) -> bool:
    """A pydantic FieldInfo used as a default (`x: int = Field(3, ge=0)`)."""
    fields = sys.modules.get("pydantic.fields")
    return fields is not None and isinstance(default, fields.FieldInfo)


def schema_for(annotation: Any) -> Plain | None:
    """Schema and checker for a JSON-only annotation; None when it needs the typed path."""
    if annotation is Any or annotation is object:
        return {}, _any
    scalar = _SCALARS.get(annotation) if _hashable(annotation) else None
    if scalar is not None:
        return {"type": scalar[0]}, scalar[1]
    origin = typing.get_origin(annotation) or annotation
    build = _GENERIC.get(origin) if _hashable(origin) else None
    if build is None:
        return None
    return build(typing.get_args(annotation))


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _literal(args: tuple[Any, ...]) -> Plain | None:
    values = list(args)
    if not all(type(v) in _JSON_VALUES for v in values):
        return None
    return {"enum": values}, lambda v: any(v == x and type(v) is type(x) for x in values)


def _union(args: tuple[Any, ...]) -> Plain | None:
    members = [schema_for(a) for a in args]
    if any(m is None for m in members):
        return None
    checks = [c for _, c in members]  # type: ignore[misc]
    return {"anyOf": [s for s, _ in members]}, lambda v: any(c(v) for c in checks)  # type: ignore[misc]


def _list(args: tuple[Any, ...]) -> Plain | None:
    if not args:
        return {"type": "array"}, lambda v: type(v) is list
    item = schema_for(args[0])
    if item is None:
        return None
    item_schema, item_check = item
    schema = {"type": "array", "items": item_schema}
    return schema, lambda v: type(v) is list and all(item_check(x) for x in v)


def _dict(args: tuple[Any, ...]) -> Plain | None:
    if not args:
        return {"type": "object"}, lambda v: type(v) is dict
    value = schema_for(args[1]) if args[0] is str else None
    if value is None:
        return None
    value_schema, value_check = value
    schema: JSONObject = {"type": "object"}
    if value_schema:
        schema["additionalProperties"] = value_schema
    return schema, lambda v: type(v) is dict and all(value_check(x) for x in v.values())


_GENERIC: dict[Any, Callable[[tuple[Any, ...]], Plain | None]] = {
    Literal: _literal,
    typing.Union: _union,
    types.UnionType: _union,
    list: _list,
    dict: _dict,
}


def _jsonable(value: Any) -> bool:
    return type(value) in _JSON_VALUES


# -- return values ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Output:
    """What a tool's return annotation promises: outputSchema, and how to check a value.

    `convert` gives the JSON form of a return value (raising ValueError when it does not fit);
    `wrap` says the structured content is {"result": <that>} because it is not an object.
    """

    schema: JSONObject
    wrap: bool
    convert: Callable[[Any], Any]


def describe_output(annotation: Any, fn_name: str, *, required: bool = False) -> Output | None:
    """The Output for a return annotation, or None when it promises no structured content:
    no annotation, None, Any, list[Any], content (Image, File, ..., mcpkit.types models, lists
    and unions of them), a type no JSON Schema describes — or `str`, which is text already:
    wrapping it as {"result": text} would only double it on the wire (unless
    structured_output=True).

    Raises TypeError instead of returning None when `required` (structured_output=True).
    """
    if _unstructured(annotation) or (annotation is str and not required):
        if required:
            raise TypeError(f"{fn_name!r} needs a return annotation describing data")
        return None
    plain = schema_for(annotation)
    if plain is None:
        from mcpkit.server.typed import typed_output

        try:
            return Output(*typed_output(annotation, fn_name))
        except TypeError:
            if required:
                raise
            return None
    schema, check = plain
    wrap = schema.get("type") != "object"
    if wrap:
        schema = {"type": "object", "properties": {"result": schema}, "required": ["result"]}
    inner = schema["properties"]["result"] if wrap else schema

    def convert(value: Any) -> Any:
        if check(value):
            return value
        raise ValueError(f"{'result' if wrap else 'value'}: {mismatch(inner, value)}")

    return Output(schema, wrap, convert)


_LOOSE = (Any, object, Ellipsis)


def _unstructured(annotation: Any) -> bool:
    if annotation in (EMPTY, None, type(None), *_LOOSE) or isinstance(annotation, str):
        return True
    # list / list[Any]: as likely a mix of content (text, Image, ...) as data.
    origin = typing.get_origin(annotation) or annotation
    if origin in (list, tuple, collections.abc.Sequence) and all(
        arg in _LOOSE for arg in typing.get_args(annotation)
    ):
        return True
    return _returns_content(annotation)


def _returns_content(annotation: Any) -> bool:
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _returns_content(typing.get_args(annotation)[0])
    if origin in (list, tuple, collections.abc.Sequence) or _is_union(annotation):
        return any(_returns_content(arg) for arg in typing.get_args(annotation))
    if not isinstance(annotation, type):
        return False
    from mcpkit.server.content import Content

    return issubclass(annotation, Content) or annotation.__module__.startswith("mcpkit.types")


def _is_union(annotation: Any) -> bool:
    return typing.get_origin(annotation) in (typing.Union, types.UnionType)


def summary(fn: Callable[..., Any]) -> str | None:
    """The first paragraph of the docstring."""
    doc = inspect.getdoc(fn)
    if not doc:
        return None
    return doc.split("\n\n", 1)[0].replace("\n", " ").strip() or None
