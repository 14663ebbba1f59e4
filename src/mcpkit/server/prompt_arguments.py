"""Prompt arguments: from a function's signature to PromptArgument definitions, and from the
wire's strings back to the annotated Python types.

How this works: each parameter is read once, at registration. Its annotation picks a
converter (int, float, bool, Literal, Enum and Optional/unions of those; anything else takes
the string as it is) and, for closed sets (Literal, Enum, bool), the allowed values that
completion/complete offers. Descriptions come from `Annotated[T, "text"]`, a Field-like
object with `.description`/`.title`, or the docstring's parameter sections (Google, NumPy or
Sphinx style, parsed by `docstrings`, as for tools).
"""

from __future__ import annotations

import enum
import inspect
import types
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from mcpkit.server.context import context_parameter
from mcpkit.server.docstrings import describe_function
from mcpkit.server.schema import resolve_hints

JSONObject = dict[str, Any]
Convert = Callable[[str], Any]


@dataclass(frozen=True, slots=True)
class Argument:
    """One prompt argument: its wire definition and how its string value becomes Python."""

    name: str
    required: bool
    convert: Convert | None  # None: the function takes the string as it is
    expected: str  # for error messages: "an integer", "one of 'a', 'b'"
    choices: tuple[str, ...] | None  # the allowed values, when there is a closed set
    definition: JSONObject


_TRUE = frozenset({"true", "1", "yes", "on"})
_FALSE = frozenset({"false", "0", "no", "off"})


def _to_bool(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ValueError(text)


def _wire_text(value: Any) -> str:
    """How a Literal value or Enum value is spelled as a (string) prompt argument."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _from_table(table: dict[str, Any]) -> Convert:
    folded = {key.casefold(): value for key, value in table.items()}

    def convert(text: str) -> Any:
        if text in table:
            return table[text]
        return folded[text.casefold()]  # KeyError: not one of the choices

    return convert


def _choices_converter(values: Sequence[Any]) -> tuple[Convert, str, tuple[str, ...]]:
    table = {_wire_text(v): v for v in values}
    choices = tuple(table)
    return _from_table(table), "one of " + ", ".join(repr(c) for c in choices), choices


def _enum_converter(cls: type[enum.Enum]) -> tuple[Convert, str, tuple[str, ...]]:
    members = list(cls)
    table = {member.name: member for member in members}
    table.update({_wire_text(member.value): member for member in members})
    choices = tuple(_wire_text(member.value) for member in members)
    return _from_table(table), "one of " + ", ".join(repr(c) for c in choices), choices


_SCALARS: dict[Any, tuple[Convert, str, tuple[str, ...] | None]] = {
    bool: (_to_bool, "true or false", ("true", "false")),
    int: (lambda text: int(text.strip()), "an integer", None),
    float: (lambda text: float(text.strip()), "a number", None),
}


def converter(annotation: Any) -> tuple[Convert | None, str, tuple[str, ...] | None]:
    """(convert, expected, choices) for one annotation; convert raises on a bad string."""
    if typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    origin = typing.get_origin(annotation)
    if isinstance(annotation, type):
        if annotation in _SCALARS:
            return _SCALARS[annotation]
        if issubclass(annotation, enum.Enum):
            return _enum_converter(annotation)
    elif origin is Literal:
        return _choices_converter(typing.get_args(annotation))
    elif origin is typing.Union or origin is types.UnionType:
        return _union_converter(typing.get_args(annotation))
    return None, "a string", None


def _union_converter(args: tuple[Any, ...]) -> tuple[Convert | None, str, tuple[str, ...] | None]:
    members = [converter(a) for a in args if a is not type(None)]
    if len(members) == 1:
        return members[0]  # Optional[X] converts as X
    if any(convert is None for convert, _, _ in members):
        return None, "a string", None  # a str member accepts anything as it is
    converts = [convert for convert, _, _ in members if convert is not None]

    def convert(text: str) -> Any:
        for attempt in converts:
            try:
                return attempt(text)
            except (ValueError, KeyError):
                continue
        raise ValueError(text)

    expected = " or ".join(expected for _, expected, _ in members)
    if all(choices is not None for _, _, choices in members):
        merged = tuple(dict.fromkeys(c for _, _, choices in members for c in choices or ()))
        return convert, expected, merged
    return convert, expected, None


def _metadata(annotation: Any) -> tuple[str | None, str | None]:
    """(title, description) from `Annotated[T, "description"]` or a Field-like object."""
    if typing.get_origin(annotation) is not typing.Annotated:
        return None, None
    title = description = None
    for extra in typing.get_args(annotation)[1:]:
        if isinstance(extra, str):
            description = extra
        else:
            title = getattr(extra, "title", None) or title
            description = getattr(extra, "description", None) or description
    return title, description


def arguments_of(fn: Callable[..., Any]) -> tuple[str | None, tuple[Argument, ...]]:
    """The context parameter of `fn` (if any) and its prompt arguments, in signature order."""
    hints = resolve_hints(fn)
    skip = context_parameter(fn, hints)
    _, docs = describe_function(fn)
    found = []
    for name, param in inspect.signature(fn).parameters.items():
        if name == skip or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        annotation = hints.get(name, Any)
        convert, expected, choices = converter(annotation)
        title, description = _metadata(annotation)
        required = param.default is inspect.Parameter.empty
        definition: JSONObject = {"name": name}
        if title is not None:
            definition["title"] = title
        description = description or docs.get(name)
        if description:
            definition["description"] = description
        definition["required"] = required
        found.append(Argument(name, required, convert, expected, choices, definition))
    return skip, tuple(found)
