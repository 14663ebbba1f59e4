"""Function signature -> JSON Schema for tool arguments, and a validator for that schema.

This covers JSON's own types (str, int, float, bool, None, list, dict, Literal, unions with
None); other annotations accept any value for now. Validation is hand-rolled so a cheap tool
call costs microseconds and a stdio server never imports a validation library it does not use.
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

JSONObject = dict[str, Any]
Check = Callable[[Any], bool]

_SCALARS: dict[Any, tuple[str, Check]] = {
    str: ("string", lambda v: type(v) is str),
    int: ("integer", lambda v: type(v) is int),
    float: ("number", lambda v: type(v) in (int, float)),
    bool: ("boolean", lambda v: type(v) is bool),
    type(None): ("null", lambda v: v is None),
}


def _any(value: Any) -> bool:
    return True


@dataclass(frozen=True, slots=True)
class Parameter:
    name: str
    schema: JSONObject
    check: Check
    required: bool


@dataclass(frozen=True, slots=True)
class Signature:
    """What a function accepts: its JSON Schema and a validator for incoming arguments."""

    parameters: tuple[Parameter, ...]
    input_schema: JSONObject
    names: frozenset[str]

    def problems(self, arguments: JSONObject) -> list[str]:
        """One message per bad or missing argument; empty when all is well."""
        found: list[str] = []
        for parameter in self.parameters:
            if parameter.name not in arguments:
                if parameter.required:
                    found.append(f"{parameter.name}: required argument missing")
            elif not parameter.check(arguments[parameter.name]):
                expected = parameter.schema.get("type", "a valid value")
                got = type(arguments[parameter.name]).__name__
                found.append(f"{parameter.name}: expected {expected}, got {got}")
        return found

    def known(self, arguments: JSONObject) -> JSONObject:
        """The arguments this function takes; unknown extras are dropped, not passed on."""
        names = self.names
        if all(name in names for name in arguments):
            return arguments
        return {name: value for name, value in arguments.items() if name in names}


def describe(fn: Callable[..., Any], skip: frozenset[str] = frozenset()) -> Signature:
    """Build the argument schema of `fn` from its annotations and defaults."""
    hints = typing.get_type_hints(fn, include_extras=True)
    parameters = []
    properties: JSONObject = {}
    required = []
    for name, param in inspect.signature(fn).parameters.items():
        if name in skip or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        schema, check = schema_for(hints.get(name, Any))
        has_default = param.default is not inspect.Parameter.empty
        if has_default and _jsonable(param.default):
            schema = {**schema, "default": param.default}
        properties[name] = schema
        if not has_default:
            required.append(name)
        parameters.append(Parameter(name, schema, check, not has_default))
    input_schema: JSONObject = {"type": "object", "properties": properties}
    if required:
        input_schema["required"] = required
    return Signature(tuple(parameters), input_schema, frozenset(p.name for p in parameters))


def schema_for(annotation: Any) -> tuple[JSONObject, Check]:
    """JSON Schema and checker for one annotation; unknown annotations accept anything."""
    if annotation in _SCALARS:
        name, check = _SCALARS[annotation]
        return {"type": name}, check
    origin = typing.get_origin(annotation) or annotation
    build = _GENERIC.get(origin)
    if build is None:
        return {}, _any
    return build(typing.get_args(annotation))


def _annotated(args: tuple[Any, ...]) -> tuple[JSONObject, Check]:
    return schema_for(args[0])


def _literal(args: tuple[Any, ...]) -> tuple[JSONObject, Check]:
    values = list(args)
    return {"enum": values}, lambda v: any(v == x and type(v) is type(x) for x in values)


def _union(args: tuple[Any, ...]) -> tuple[JSONObject, Check]:
    members = [schema_for(a) for a in args]
    checks = [c for _, c in members]
    return {"anyOf": [s for s, _ in members]}, lambda v: any(c(v) for c in checks)


def _list(args: tuple[Any, ...]) -> tuple[JSONObject, Check]:
    if not args:
        return {"type": "array"}, lambda v: type(v) is list
    item_schema, item_check = schema_for(args[0])
    schema = {"type": "array", "items": item_schema}
    return schema, lambda v: type(v) is list and all(item_check(x) for x in v)


def _dict(args: tuple[Any, ...]) -> tuple[JSONObject, Check]:
    if len(args) != 2:
        return {"type": "object"}, lambda v: type(v) is dict
    value_schema, value_check = schema_for(args[1])
    schema = {"type": "object", "additionalProperties": value_schema}
    return schema, lambda v: type(v) is dict and all(value_check(x) for x in v.values())


_GENERIC: dict[Any, Callable[[tuple[Any, ...]], tuple[JSONObject, Check]]] = {
    typing.Annotated: _annotated,
    Literal: _literal,
    typing.Union: _union,
    types.UnionType: _union,
    list: _list,
    dict: _dict,
}


def _jsonable(value: Any) -> bool:
    return value is None or type(value) in (str, int, float, bool)


def context_parameter(fn: Callable[..., Any]) -> str | None:
    """The name of the parameter annotated `Context`, which receives the request context."""
    from mcpkit.server.context import Context

    for name, param in inspect.signature(fn).parameters.items():
        annotation = param.annotation
        if annotation is Context or annotation == "Context":
            return name
    return None


def summary(fn: Callable[..., Any]) -> str | None:
    """The first paragraph of the docstring."""
    doc = inspect.getdoc(fn)
    if not doc:
        return None
    return doc.split("\n\n", 1)[0].replace("\n", " ").strip() or None
