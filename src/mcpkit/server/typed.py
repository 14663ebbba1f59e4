"""The typed path of `schema`: pydantic for annotations beyond JSON's own types.

Imported only when a tool's signature or return annotation needs it. The arguments of a
signature become one TypedDict (`Required` / `NotRequired` by default), validated by one
TypeAdapter in strict JSON mode — the same rules as the plain path (a string is not an
integer) while still turning "2025-01-01T00:00:00Z" into a datetime, {"street": ...} into
a model and "red" into an Enum member. The result is the keyword arguments for the call.
Where strict mode and JSON Schema disagree (3.0 is an integer; true is not 1 in an Enum or a
Literal; a set's items must be unique), the arguments get a second look so that the server
accepts what its inputSchema accepts (`conform`).
"""

from __future__ import annotations

import contextlib
import sys
import types
import typing
from collections.abc import Callable
from typing import Annotated, Any

import orjson
import typing_extensions as te
from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic.errors import PydanticSchemaGenerationError, PydanticUserError
from pydantic.fields import FieldInfo
from pydantic.json_schema import GenerateJsonSchema
from pydantic_core import ErrorDetails, to_jsonable_python

from mcpkit.protocol.jsonrpc import dumps
from mcpkit.server.arguments import EMPTY, InvalidArguments
from mcpkit.server.conform import (
    Refused,
    conform,
    integral_floats,
    pydantic_gaps,
    with_values,
)

JSONObject = dict[str, Any]
_BUILD_ERRORS = (PydanticSchemaGenerationError, PydanticUserError, TypeError, ValueError)


class _Schema(GenerateJsonSchema):
    """Leaves out the titles pydantic derives from field names ("Street" for `street`)."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False


def typed_signature(
    fn_name: str, taken: list[tuple[str, Any, Any]], docs: dict[str, str]
) -> tuple[JSONObject, Callable[[JSONObject], JSONObject]]:
    """(inputSchema, convert) for parameters given as (name, annotation, default).

    Raises TypeError when pydantic cannot build a schema for an annotation.
    """
    fields: dict[str, Any] = {}
    for name, annotation, default in taken:
        shape = pydantic_ready(annotation)
        required = default is EMPTY
        if isinstance(default, FieldInfo):  # x: int = Field(3, description=...)
            required = default.is_required()
            shape = Annotated[shape, default]
        fields[name] = te.Required[shape] if required else te.NotRequired[shape]
    arguments: Any = _typeddict(f"{fn_name}_arguments", fields)
    try:
        adapter: TypeAdapter[JSONObject] = TypeAdapter(arguments)
        schema = adapter.json_schema(schema_generator=_Schema)
    except _BUILD_ERRORS as exc:
        raise TypeError(f"cannot describe the parameters of {fn_name!r}: {exc}") from exc
    schema.pop("title", None)
    properties = schema.setdefault("properties", {})
    for name, _, default in taken:
        prop = properties.get(name)
        if prop is None:
            continue  # renamed by an alias
        if docs.get(name):
            prop.setdefault("description", docs[name])
        if default is not EMPTY and not isinstance(default, FieldInfo):
            with contextlib.suppress(ValueError):
                prop.setdefault("default", to_jsonable_python(default))
    return schema, _converter(adapter, schema)


def _converter(
    adapter: TypeAdapter[JSONObject], schema: JSONObject
) -> Callable[[JSONObject], JSONObject]:
    validate_json = adapter.validate_json
    gaps = pydantic_gaps(schema)
    always = "boolean" in gaps or "uniqueItems" in gaps  # 1 for True; duplicates in a set
    on_booleans = "number" in gaps  # a boolean may pass for a listed number

    def convert(arguments: JSONObject) -> JSONObject:
        try:
            data = orjson.dumps(arguments)
        except TypeError:  # not from the wire (an in-process caller passed objects)
            return _validated(adapter.validate_python, arguments)
        try:
            values = validate_json(data, strict=True)
        except ValidationError as exc:
            values = _second_look(adapter, arguments, exc)
        if always or (on_booleans and (b"true" in data or b"false" in data)):
            _check_gaps(schema, arguments)
        return values

    return convert


def _validated(validate: Callable[..., JSONObject], arguments: JSONObject | bytes) -> JSONObject:
    try:
        return validate(arguments, strict=True)
    except ValidationError as exc:
        raise InvalidArguments(_problems(exc.errors(include_url=False))) from None


def _second_look(
    adapter: TypeAdapter[JSONObject], arguments: JSONObject, refused: ValidationError
) -> JSONObject:
    """Strict mode refuses 3.0 for an int, which JSON Schema (our inputSchema) accepts: once
    more with ints in those places. Raises InvalidArguments."""
    errors = refused.errors(include_url=False)
    paths = integral_floats(arguments, (error["loc"] for error in errors))
    if not paths:
        raise InvalidArguments(_problems(errors))
    data = dumps(with_values(arguments, paths))  # past 64 bits too (1e300 is an integer)
    return _validated(adapter.validate_json, data)


def _check_gaps(schema: JSONObject, arguments: JSONObject) -> None:
    """Refuse what pydantic accepted but the inputSchema does not (see `pydantic_gaps`).
    Raises InvalidArguments naming those arguments."""
    properties = schema.get("properties", {})
    problems = []
    for name, value in arguments.items():
        try:
            conform(properties.get(name, True), value, schema)
        except Refused as exc:
            problems.append(f"{name}: {str(exc) or 'does not match the input schema'}")
    if problems:
        raise InvalidArguments(problems)


def _problems(errors: list[ErrorDetails]) -> list[str]:
    return [_problem(error, argument=True) for error in errors]


def typed_output(annotation: Any, fn_name: str) -> tuple[JSONObject, bool, Callable[[Any], Any]]:
    """(outputSchema, wrapped, convert) for a return annotation.

    Objects (models, dataclasses, TypedDicts) are the structured content as they are; any
    other type is wrapped as {"result": value}. `convert` validates a return value and
    gives its JSON form; it raises ValueError naming what does not fit.
    Raises TypeError when pydantic cannot describe the annotation.
    """
    try:
        adapter: TypeAdapter[Any] = TypeAdapter(pydantic_ready(annotation))
        schema = adapter.json_schema(mode="serialization", schema_generator=_Schema)
    except _BUILD_ERRORS as exc:
        raise TypeError(f"cannot describe the return type of {fn_name!r}: {exc}") from exc
    wrap = not _object_like(annotation)
    if wrap:
        defs = schema.pop("$defs", None)
        schema = {"type": "object", "properties": {"result": schema}, "required": ["result"]}
        if defs:
            schema["$defs"] = defs
    else:
        schema = _inline_root_ref(schema)

    exact = (
        annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None
    )

    def convert(value: Any) -> Any:
        if type(value) is exact:  # the annotated model itself: nothing to check
            return value.model_dump(mode="json", by_alias=True)
        try:
            validated = adapter.validate_python(value)
        except ValidationError as exc:
            problems = [_problem(e, prefix="result" if wrap else "") for e in exc.errors()]
            raise ValueError("; ".join(problems)) from None
        if isinstance(validated, BaseModel):  # a subclass instance keeps its own fields
            return validated.model_dump(mode="json", by_alias=True)
        return adapter.dump_python(validated, mode="json", by_alias=True)

    return schema, wrap, convert


def _object_like(annotation: Any) -> bool:
    while typing.get_origin(annotation) is Annotated:
        annotation = typing.get_args(annotation)[0]
    if not isinstance(annotation, type):
        return False
    import dataclasses

    return (
        issubclass(annotation, BaseModel)
        or dataclasses.is_dataclass(annotation)
        or te.is_typeddict(annotation)
    )


def _inline_root_ref(schema: JSONObject) -> JSONObject:
    """A self-referencing model's schema is a bare `$ref`; outputSchema needs an object root."""
    ref = schema.get("$ref")
    if not isinstance(ref, str) or not ref.startswith("#/$defs/"):
        return schema
    definition = schema["$defs"][ref.removeprefix("#/$defs/")]
    return {**definition, **{k: v for k, v in schema.items() if k != "$ref"}}


def _problem(error: ErrorDetails, *, argument: bool = False, prefix: str = "") -> str:
    parts = [prefix] if prefix else []
    for part in error["loc"]:
        if isinstance(part, int):
            parts[-1:] = [f"{parts[-1] if parts else ''}[{part}]"]
        else:
            parts.append(str(part))
    path = ".".join(parts) or "value"
    if error["type"] == "missing":
        top = argument and len(error["loc"]) == 1
        return f"{path}: {'required argument missing' if top else 'field required'}"
    message = f"{path}: {error['msg']}"
    if error["type"].endswith("_type") and "input" in error:
        message += f" (got {_json_kind(error['input'])})"
    return message


def _json_kind(value: Any) -> str:
    names = {str: "string", int: "integer", float: "number", bool: "boolean", list: "array"}
    if value is None:
        return "null"
    return names.get(type(value)) or ("object" if isinstance(value, dict) else type(value).__name__)


# -- stdlib TypedDicts below Python 3.12 --------------------------------------------------------


def pydantic_ready(annotation: Any) -> Any:
    """pydantic refuses `typing.TypedDict` below 3.12; rebuild those as typing_extensions ones,
    wherever they appear in `annotation`."""
    if sys.version_info >= (3, 12):
        return annotation
    return _rebuild(annotation, {})


_QUALIFIERS = {te.Required, te.NotRequired, typing.Required, typing.NotRequired}


def _rebuild(annotation: Any, memo: dict[Any, Any]) -> Any:
    if typing.is_typeddict(annotation) and type(annotation).__module__ == "typing":
        if annotation not in memo:
            memo[annotation] = _rebuild_typeddict(annotation, memo)
        return memo[annotation]
    args = typing.get_args(annotation)
    if not args or not isinstance(args, tuple):
        return annotation
    new_args = tuple(_rebuild(arg, memo) for arg in args)
    if all(new is old for new, old in zip(new_args, args, strict=True)):
        return annotation
    origin = typing.get_origin(annotation)
    if origin is Annotated:
        return Annotated[(new_args[0], *annotation.__metadata__)]
    if origin in (typing.Union, types.UnionType):
        return typing.Union[new_args]  # noqa: UP007 - built from a tuple
    return origin[new_args]


def _typeddict(name: str, items: dict[str, Any]) -> Any:
    """A typing_extensions TypedDict made at run time (the functional form)."""
    make: Callable[[str, dict[str, Any]], Any] = te.TypedDict  # type: ignore[assignment]
    return make(name, items)


def _rebuild_typeddict(td: Any, memo: dict[Any, Any]) -> Any:
    items = {}
    for key, hint in typing.get_type_hints(td, include_extras=True).items():
        # An explicit qualifier wins: below 3.12 a TypedDict from a module with `from
        # __future__ import annotations` counts `NotRequired[...]` keys as required.
        required = key in td.__required_keys__
        inner = hint
        while typing.get_origin(inner) in _QUALIFIERS:
            required = typing.get_origin(inner) in (te.Required, typing.Required)
            inner = typing.get_args(inner)[0]
        item = _rebuild(inner, memo)
        items[key] = te.Required[item] if required else te.NotRequired[item]
    rebuilt = _typeddict(td.__name__, items)
    rebuilt.__doc__ = td.__doc__
    rebuilt.__module__ = td.__module__
    return rebuilt
