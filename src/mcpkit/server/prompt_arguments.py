"""Prompt arguments: from a function's signature to PromptArgument definitions, and from the
wire's strings back to the annotated Python types.

How this works: each parameter is read once, at registration. Its annotation picks a
converter from the wire's string (`string_values`, shared with resource template variables:
int, float, bool, Literal, Enum and Optional/unions of those; anything else takes the string
as it is) and, for closed sets (Literal, Enum, bool), the allowed values that
completion/complete offers. Descriptions come from `Annotated[T, "text"]`, a Field-like
object with `.description`/`.title`, or the docstring's parameter sections (Google, NumPy or
Sphinx style, parsed by `docstrings`, as for tools).
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mcpkit.server.context import context_parameter
from mcpkit.server.docstrings import describe_function
from mcpkit.server.string_values import StringConverter, string_converter

JSONObject = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Argument:
    """One prompt argument: its wire definition and how its string value becomes Python."""

    name: str
    required: bool
    converter: StringConverter
    definition: JSONObject

    @property
    def choices(self) -> tuple[str, ...] | None:
        """The allowed values, when there is a closed set (completion offers them)."""
        return self.converter.choices


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


def arguments_of(
    fn: Callable[..., Any], hints: JSONObject
) -> tuple[str | None, tuple[Argument, ...]]:
    """The context parameter of `fn` (if any) and its prompt arguments, in signature order;
    `hints` are its resolved annotations (`hints.resolve_hints`)."""
    skip = context_parameter(fn, hints)
    _, docs = describe_function(fn)
    found = []
    for name, param in inspect.signature(fn).parameters.items():
        if name == skip or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        annotation = hints.get(name, Any)
        title, description = _metadata(annotation)
        required = param.default is inspect.Parameter.empty
        definition: JSONObject = {"name": name}
        if title is not None:
            definition["title"] = title
        description = description or docs.get(name)
        if description:
            definition["description"] = description
        definition["required"] = required
        found.append(Argument(name, required, string_converter(annotation), definition))
    return skip, tuple(found)
