"""From a string on the wire to a parameter's Python value: one converter for prompt arguments
and resource template variables, so both read "yes", " 7 " or "HIGH" the same way.

How this works: `string_converter(annotation)` reads an annotation once, at registration, and
returns a `StringConverter`: a parse function (None when the parameter takes the string as it
is), a phrase for error messages ("an integer", "one of 'low', 'high'") and, for closed sets,
the spellings completion offers. The rules (documented in docs/server.md):

- str, Any and any type not listed here: the string as it is;
- int: an optional sign and ASCII digits; float: a decimal or exponent number that is finite;
  bool: true/false, yes/no, on/off, 1/0 in any case; surrounding whitespace is ignored;
- Literal and Enum: the value's text exactly, else the same text in another case; an Enum
  member also by its name; bool values are spelled true/false;
- Optional[X] and Annotated[X, ...] as X; a union tries its members in order, and a union
  with a member taken as it is (str) takes the string as it is.
"""

from __future__ import annotations

import enum
import math
import re
import types
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

Parse = Callable[[str], Any]

_INTEGER = re.compile(r"[+-]?[0-9]+")
_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_BOOLEANS = {
    **dict.fromkeys(("true", "yes", "on", "1"), True),
    **dict.fromkeys(("false", "no", "off", "0"), False),
}


@dataclass(frozen=True, slots=True)
class StringConverter:
    """How one parameter's string becomes its value."""

    parse: Parse | None  # None: the parameter takes the string as it is
    expected: str  # for error messages: "an integer", "one of 'a', 'b'"
    choices: tuple[str, ...] | None = None  # the allowed values, when the set is closed

    def convert(self, text: str) -> Any:
        """The value `text` stands for.

        Raises ValueError("expected <what>") when it stands for none.
        """
        if self.parse is None:
            return text
        try:
            return self.parse(text)
        except (ValueError, KeyError):
            raise ValueError(f"expected {self.expected}") from None


AS_IS = StringConverter(None, "a string")


def _integer(text: str) -> int:
    text = text.strip()
    if _INTEGER.fullmatch(text) is None:
        raise ValueError(text)
    return int(text)  # ValueError past Python's digit limit


def _number(text: str) -> float:
    text = text.strip()
    value = float(text) if _NUMBER.fullmatch(text) else math.nan
    if not math.isfinite(value):  # not a number, or past a float's range ("1e999")
        raise ValueError(text)
    return value


def _boolean(text: str) -> bool:
    return _BOOLEANS[text.strip().lower()]  # KeyError: not a boolean word


_SCALARS: dict[Any, StringConverter] = {
    int: StringConverter(_integer, "an integer"),
    float: StringConverter(_number, "a number"),
    bool: StringConverter(_boolean, "true or false", ("true", "false")),
}


def string_converter(annotation: Any) -> StringConverter:
    """The converter for a parameter annotated `annotation` (rules in the module docstring)."""
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
    return AS_IS


def _wire_text(value: Any) -> str:
    """How a Literal or Enum value is spelled as a string."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _from_table(table: dict[str, Any]) -> Parse:
    folded = {key.casefold(): value for key, value in table.items()}

    def parse(text: str) -> Any:
        if text in table:
            return table[text]
        return folded[text.casefold()]  # KeyError: not one of the choices

    return parse


def _closed_set(table: dict[str, Any], choices: tuple[str, ...]) -> StringConverter:
    expected = "one of " + ", ".join(repr(choice) for choice in choices)
    return StringConverter(_from_table(table), expected, choices)


def _choices_converter(values: Sequence[Any]) -> StringConverter:
    table = {_wire_text(value): value for value in values}
    return _closed_set(table, tuple(table))


def _enum_converter(cls: type[enum.Enum]) -> StringConverter:
    members = list(cls)
    table: dict[str, Any] = {member.name: member for member in members}
    table.update({_wire_text(member.value): member for member in members})
    return _closed_set(table, tuple(_wire_text(member.value) for member in members))


def _union_converter(args: tuple[Any, ...]) -> StringConverter:
    members = [string_converter(arg) for arg in args if arg is not type(None)]
    if len(members) == 1:
        return members[0]  # Optional[X] converts as X
    if any(member.parse is None for member in members):
        return AS_IS  # a member that takes the string as it is accepts anything
    parsers = [member.parse for member in members if member.parse is not None]

    def parse(text: str) -> Any:
        for attempt in parsers:
            try:
                return attempt(text)
            except (ValueError, KeyError):
                continue
        raise ValueError(text)

    expected = " or ".join(member.expected for member in members)
    if any(member.choices is None for member in members):
        return StringConverter(parse, expected)
    merged = tuple(dict.fromkeys(c for member in members for c in member.choices or ()))
    return StringConverter(parse, expected, merged)
