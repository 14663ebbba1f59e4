"""Resource functions: template variables -> typed arguments, return values -> contents.

How this works: `ResourceFunction` reads a function once, at registration. Each template
variable must be a parameter (or land in `**kwargs`) and each parameter without a default must
be a variable; a parameter annotated `Context` receives the request context. Each parameter's
annotation gives a converter from the matched string (`string_values`, shared with prompt
arguments; item by item for exploded and list-annotated variables) to the Python value; a
value that does not convert means the URI does not name this template's resource
(`VariableMismatch`). `read_result` turns what the
function returned into a ReadResourceResult dict (rules in `mcpkit.server.resources`).
"""

from __future__ import annotations

import collections.abc
import dataclasses
import inspect
import types
import typing
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import orjson

from mcpkit.errors import MCPError
from mcpkit.protocol.jsonrpc import dumps
from mcpkit.server.context import Context, context_parameter
from mcpkit.server.hints import caller_namespace, resolve_hints
from mcpkit.server.resource_wire import ResourceContents, contents_item, not_found
from mcpkit.server.string_values import string_converter
from mcpkit.server.uri_template import UriTemplate, is_template

JSONObject = dict[str, Any]
Reader = Callable[[Context], "JSONObject | Awaitable[JSONObject]"]
Convert = Callable[[Any], Any]

_CONTENTS_MODELS = frozenset({"TextResourceContents", "BlobResourceContents"})
_SEQUENCES = {
    list: list,
    collections.abc.Sequence: list,
    collections.abc.Iterable: list,
    collections.abc.Collection: list,
    tuple: tuple,
    set: set,
    frozenset: frozenset,
}


class ResourceNotFound(MCPError):
    """Raise in a resource function when the URI names nothing: the client gets the
    not-found error its revision names, with the URI in `data`."""


class VariableMismatch(MCPError):
    """A URI fits a template's shape but a variable does not convert to its parameter type."""


@dataclass(frozen=True, slots=True)
class Variable:
    """How one template variable becomes an argument."""

    convert: Convert
    is_list: bool
    required: bool
    choices: tuple[str, ...] | None


class ResourceFunction:
    """A function behind a resource or a template. Raises ValueError when the template's
    variables and the function's parameters do not fit together, TypeError for an
    annotation that does not resolve (see `mcpkit.server.hints`)."""

    def __init__(self, fn: Callable[..., Any], uri: str, mime_type: str | None) -> None:
        self.fn = fn
        self.template = UriTemplate(uri) if is_template(uri) else None
        hints = resolve_hints(fn, caller_namespace(), kind="resource")
        self.context_parameter = context_parameter(fn, hints)
        self.is_async = inspect.iscoroutinefunction(fn)
        self.mime_type = mime_type or _mime_from_return(hints)
        self.variables = _variables(fn, hints, uri, self.template, self.context_parameter)
        exploded = self.template.exploded if self.template is not None else frozenset()
        self.lists = frozenset(n for n, v in self.variables.items() if v.is_list) - exploded
        self.choices = {n: v.choices for n, v in self.variables.items() if v.choices}

    def reader(self, uri: str) -> Reader:
        """The reader of a resource with a concrete URI."""
        return lambda ctx: self.read(uri, {}, ctx)

    def bind(self, uri: str) -> Reader | None:
        """The reader for `uri` when it fits the template, else None.

        Raises VariableMismatch when it fits but a variable does not convert.
        """
        assert self.template is not None
        values = self.template.match(uri, lists=self.lists)
        if values is None:
            return None
        arguments: JSONObject = {}
        for name, value in values.items():
            variable = self.variables.get(name)
            if variable is None:
                arguments[name] = value  # into **kwargs, as matched
                continue
            try:
                arguments[name] = variable.convert(value)
            except (ValueError, TypeError) as exc:
                raise VariableMismatch(f"{name}: {exc}") from None
        for name, variable in self.variables.items():
            if name in arguments or not variable.required:
                continue
            if not variable.is_list:
                return None
            arguments[name] = variable.convert([])  # an empty list expands to nothing
        return lambda ctx: self.read(uri, arguments, ctx)

    def read(
        self, uri: str, arguments: JSONObject, ctx: Context
    ) -> JSONObject | Awaitable[JSONObject]:
        if self.context_parameter is not None:
            arguments = {**arguments, self.context_parameter: ctx}
        if self.is_async:
            return self._read_async(uri, arguments, ctx)
        try:
            value = self.fn(**arguments)
        except ResourceNotFound as exc:
            raise not_found(uri, ctx, str(exc) or None) from None
        if value is None:
            raise not_found(uri, ctx)
        return read_result(value, uri, self.mime_type)

    async def _read_async(self, uri: str, arguments: JSONObject, ctx: Context) -> JSONObject:
        try:
            value = await self.fn(**arguments)
        except ResourceNotFound as exc:
            raise not_found(uri, ctx, str(exc) or None) from None
        if value is None:
            raise not_found(uri, ctx)
        return read_result(value, uri, self.mime_type)


# -- return values -> contents ---------------------------------------------------------------


def read_result(value: Any, uri: str, mime_type: str | None) -> JSONObject:
    """What a resource function returned -> a ReadResourceResult dict.

    Raises TypeError for a value JSON cannot carry.
    """
    if isinstance(value, str | bytes | bytearray):
        return {"contents": [contents_item(uri, value, mime_type)]}
    if isinstance(value, ResourceContents):
        return {"contents": [value.to_wire(uri, mime_type)]}
    if _protocol_model(value) == "ReadResourceResult":
        return _dump(value)
    if _is_contents(value):
        return {"contents": [_contents(value, uri, mime_type)]}
    if isinstance(value, list | tuple) and value and all(_is_contents(v) for v in value):
        return {"contents": [_contents(v, uri, mime_type) for v in value]}
    text = dumps(value, default=_json_default, option=orjson.OPT_NON_STR_KEYS).decode()
    return {"contents": [{"uri": uri, "mimeType": mime_type or "application/json", "text": text}]}


def _protocol_model(value: Any) -> str | None:
    cls = type(value)
    return cls.__name__ if cls.__module__.startswith("mcpkit.types") else None


def _is_contents(value: Any) -> bool:
    return isinstance(value, ResourceContents) or _protocol_model(value) in _CONTENTS_MODELS


def _contents(value: Any, uri: str, mime_type: str | None) -> JSONObject:
    if isinstance(value, ResourceContents):
        return value.to_wire(uri, mime_type)
    return _dump(value)


def _dump(model: Any) -> JSONObject:
    dumped: JSONObject = model.model_dump(mode="json", by_alias=True, exclude_none=True)
    return dumped


def _json_default(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    if isinstance(value, set | frozenset):
        return sorted(value, key=repr)
    raise TypeError(f"a resource function returned {type(value).__name__}, which JSON cannot carry")


def _mime_from_return(hints: JSONObject) -> str | None:
    hint = _without_none(hints.get("return"))
    origin = typing.get_origin(hint) or hint
    if origin is str:
        return "text/plain"
    if origin in (bytes, bytearray):
        return "application/octet-stream"
    if origin in (dict, list) or dataclasses.is_dataclass(origin) or hasattr(origin, "model_dump"):
        return "application/json"
    return None


# -- template variables -> typed arguments -------------------------------------------------------


def _variables(
    fn: Callable[..., Any],
    hints: JSONObject,
    uri: str,
    template: UriTemplate | None,
    skip: str | None,
) -> dict[str, Variable]:
    names = template.variables if template is not None else ()
    exploded = template.exploded if template is not None else frozenset()
    parameters = inspect.signature(fn).parameters
    takes_any = any(p.kind is p.VAR_KEYWORD for p in parameters.values())
    variables = {}
    for name, param in parameters.items():
        if name == skip or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        required = param.default is inspect.Parameter.empty
        if name not in names:
            if required:
                raise ValueError(f"{fn.__name__}() parameter {name!r} is not a variable of {uri}")
            continue
        if param.kind is param.POSITIONAL_ONLY:
            raise ValueError(f"{fn.__name__}() parameter {name!r} cannot be positional-only")
        annotation = hints.get(name, Any)
        convert, is_list, choices = _converter(annotation)
        if name in exploded and not is_list:
            if annotation is not Any:
                raise ValueError(
                    f"variable {name!r} of {uri} is exploded ({{{name}*}}): "
                    f"annotate {fn.__name__}() parameter {name!r} as a list"
                )
            convert, is_list = list, True
        variables[name] = Variable(convert, is_list, required, choices)
    missing = [n for n in names if n not in variables]
    if missing and not takes_any:
        raise ValueError(f"{uri} variable {missing[0]!r} is not a parameter of {fn.__name__}()")
    return variables


def _converter(annotation: Any) -> tuple[Convert, bool, tuple[str, ...] | None]:
    """(convert, takes a list, closed set of values) for one parameter annotation."""
    annotation = _without_none(annotation)
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _converter(typing.get_args(annotation)[0])
    container = _SEQUENCES.get(origin or annotation)
    if container is not None:
        args = [a for a in typing.get_args(annotation) if a is not Ellipsis]
        item = string_converter(args[0] if args else str)

        def convert_all(values: Any) -> Any:
            if isinstance(values, str):
                values = [values]
            return container(item.convert(v) for v in values)

        return convert_all, True, item.choices
    one = string_converter(annotation)

    def convert_one(value: Any) -> Any:
        if not isinstance(value, str):
            raise TypeError("expected one value, not a list")
        return one.convert(value)

    return convert_one, False, one.choices


def _without_none(annotation: Any) -> Any:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return annotation
