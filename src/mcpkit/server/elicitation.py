"""Typed form elicitation: a Python type in, the flat schema MCP allows out, a typed answer back.

MCP form elicitation accepts only a flat object of primitive properties (string, number,
integer, boolean, enums of strings). A pydantic model, dataclass or TypedDict describes it;
the user's answer is validated into that type before the tool sees it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

T = TypeVar("T")
JSONObject = dict[str, Any]
_PRIMITIVES = {"string", "number", "integer", "boolean"}


@dataclass(frozen=True, slots=True)
class Elicited(Generic[T]):
    """The user's answer: `data` is set (and typed) only when `action` is "accept"."""

    action: Literal["accept", "decline", "cancel"]
    data: T | None
    raw: JSONObject


def requested_schema(shape: type[Any] | JSONObject) -> JSONObject:
    """The requestedSchema for `shape`. Raises ValueError for shapes MCP forms cannot carry."""
    # A dict is sent as given: its titles are the author's.
    schema = shape if isinstance(shape, dict) else _from_type(shape)
    properties = schema.get("properties", {})
    if schema.get("type") != "object" or "$defs" in schema:
        raise ValueError("an elicitation schema must be a flat object (no nested types)")
    for name, prop in properties.items():
        if not _form_field(prop):
            raise ValueError(
                f"elicitation field {name!r} must be a string, number, integer, boolean, enum "
                "or a list of enum strings (multi-select)"
            )
    return schema


def _from_type(shape: type[Any]) -> JSONObject:
    """pydantic's schema for `shape`, without the titles it makes up from names (the type's,
    "Charts"; a field's, "Include Charts"): a title the author wrote (`Field(title=...)`) is
    kept, since a form shows it as the field's label."""
    from pydantic import TypeAdapter

    schema = TypeAdapter(shape).json_schema()
    schema = {key: value for key, value in schema.items() if key != "title"}
    properties = {}
    for name, prop in schema.get("properties", {}).items():
        made_up = prop.get("title") == name.replace("_", " ").title()
        properties[name] = {k: v for k, v in prop.items() if not (made_up and k == "title")}
    if properties:
        schema["properties"] = properties
    return schema


def _form_field(prop: JSONObject) -> bool:
    if prop.get("type") in _PRIMITIVES:
        return True
    # Multi-select (2025-11-25): an array of strings drawn from an enum.
    items = prop.get("items")
    return prop.get("type") == "array" and isinstance(items, dict) and "enum" in items


def parse_answer(shape: type[T] | JSONObject, result: JSONObject) -> Elicited[T]:
    """Validate an ElicitResult against `shape`.

    Raises ValueError for a malformed answer (a tool that lets it escape reports a tool error).
    """
    action = result.get("action")
    if action not in ("accept", "decline", "cancel"):
        raise ValueError(f"the client answered elicitation with an unknown action {action!r}")
    if action != "accept":
        return Elicited(action, None, result)
    content = result.get("content") or {}
    if isinstance(shape, dict):
        problems = content_problems(shape, content)
        if problems:
            raise ValueError(
                "the client's answer does not fit the requested schema: " + "; ".join(problems)
            )
        return Elicited("accept", content, result)
    from pydantic import TypeAdapter, ValidationError

    try:
        data = TypeAdapter(shape).validate_python(content)
    except ValidationError as exc:
        raise ValueError(f"the client's answer does not fit the requested schema: {exc}") from exc
    return Elicited("accept", data, result)


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "boolean": (bool,),
    "number": (int, float),
    "integer": (int,),
}


def content_problems(schema: JSONObject, content: Any) -> list[str]:
    """What is wrong with an accepted answer against a (flat) form schema given as a dict:
    missing required fields, values of the wrong JSON type, values outside an enum."""
    if type(content) is not dict:
        return ["content must be an object"]
    properties = schema.get("properties") or {}
    problems = [
        f"{name!r} is required" for name in schema.get("required") or () if name not in content
    ]
    for name, value in content.items():
        field = properties.get(name)
        if type(field) is not dict:
            continue
        kind = field.get("type")
        wanted = _JSON_TYPES.get(kind) if type(kind) is str else None
        if wanted is not None and (
            not isinstance(value, wanted) or (kind != "boolean" and type(value) is bool)
        ):
            problems.append(f"{name!r} must be a {kind}, not {value!r}")
        elif kind == "array" and type(value) is not list:
            problems.append(f"{name!r} must be an array, not {value!r}")
        elif "enum" in field and value not in field["enum"]:
            problems.append(f"{name!r} must be one of {field['enum']!r}")
    return problems
