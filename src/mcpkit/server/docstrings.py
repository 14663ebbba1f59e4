"""Docstrings -> a description and per-parameter descriptions.

Three conventions are read, and may be mixed:

    Google                 NumPy                     Sphinx
    Args:                  Parameters                :param city: Where.
        city (str): Where.  ----------               :param int days: How many
        days: How many        city : str                 days ahead.
            days ahead.           Where.

The description is the prose before the first section (Args:, Returns:, Parameters /
----------, :param ..., and the like), with paragraph breaks kept. A parameter's text may run
over several indented lines; they are joined with single spaces.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import Any

_GOOGLE_PARAMS = {"args", "arguments", "parameters", "params", "keyword args", "keyword arguments"}
_GOOGLE_OTHER = {
    "returns", "return", "yields", "yield", "raises", "raise", "examples", "example", "notes",
    "note", "see also", "attributes", "warnings", "warning", "todo", "references",
    "other parameters",
}  # fmt: skip
_GOOGLE_ITEM = re.compile(r"^(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_NUMPY_ITEM = re.compile(r"^(\*{0,2}\w+)(?:\s*:.*)?$")
_SPHINX_FIELD = re.compile(r"^:(\w+)((?:\s+[^:]+?)?)\s*:\s*(.*)$")
_SPHINX_PARAM_KINDS = {"param", "parameter", "arg", "argument", "key", "keyword"}


def parse_docstring(doc: str | None) -> tuple[str | None, dict[str, str]]:
    """(description, {parameter name: description}) from a docstring; missing parts empty."""
    if not doc:
        return None, {}
    lines = inspect.cleandoc(doc).splitlines()
    params: dict[str, str] = {}
    end = len(lines)
    i = 0
    while i < len(lines):
        kind = _section_at(lines, i)
        if kind is None:
            i += 1
            continue
        end = min(end, i)
        i = _READERS[kind](lines, i, params)
    description = "\n".join(lines[:end]).strip()
    return description or None, params


def describe_function(fn: Callable[..., Any]) -> tuple[str | None, dict[str, str]]:
    return parse_docstring(inspect.getdoc(fn))


def _section_at(lines: list[str], i: int) -> str | None:
    line = lines[i]
    if line[:1].isspace():
        return None
    stripped = line.strip()
    if _SPHINX_FIELD.match(stripped):
        return "sphinx"
    title = stripped.rstrip(":").lower()
    if stripped.endswith(":") and (title in _GOOGLE_PARAMS or title in _GOOGLE_OTHER):
        return "google"
    if i + 1 < len(lines) and re.fullmatch(r"-{3,}", lines[i + 1].strip()) and stripped:
        return "numpy"
    return None


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _block(lines: list[str], start: int, min_indent: int) -> int:
    """Index of the first line at `start` or later that is non-blank and indented less."""
    i = start
    while i < len(lines) and (not lines[i].strip() or _indent(lines[i]) >= min_indent):
        i += 1
    return i


def _items(lines: list[str], item: re.Pattern[str], params: dict[str, str] | None) -> None:
    """Items at the block's smallest indent; deeper lines continue the current item."""
    body = [line for line in lines if line.strip()]
    if not body:
        return
    base = min(_indent(line) for line in body)
    name: str | None = None
    for line in body:
        text = line.strip()
        found = item.match(text) if _indent(line) == base else None
        if found:
            name = found.group(1).lstrip("*")
            if params is not None:
                rest = found.group(2) if found.lastindex and found.lastindex >= 2 else ""
                params[name] = (rest or "").strip()
        elif name is not None and params is not None:
            params[name] = f"{params[name]} {text}".strip()


def _read_google(lines: list[str], i: int, params: dict[str, str]) -> int:
    title = lines[i].strip().rstrip(":").lower()
    end = _block(lines, i + 1, 1)
    _items(lines[i + 1 : end], _GOOGLE_ITEM, params if title in _GOOGLE_PARAMS else None)
    return end


def _read_numpy(lines: list[str], i: int, params: dict[str, str]) -> int:
    title = lines[i].strip().lower()
    end = i + 2
    while end < len(lines) and _section_at(lines, end) is None:
        end += 1
    collected: dict[str, str] = {}
    _items(lines[i + 2 : end], _NUMPY_ITEM, collected)
    if title in _GOOGLE_PARAMS:
        params.update((name, text) for name, text in collected.items())
    return end


def _read_sphinx(lines: list[str], i: int, params: dict[str, str]) -> int:
    found = _SPHINX_FIELD.match(lines[i].strip())
    assert found is not None
    kind, middle, text = found.groups()
    end = _block(lines, i + 1, 1)
    continuation = " ".join(line.strip() for line in lines[i + 1 : end] if line.strip())
    if kind in _SPHINX_PARAM_KINDS and middle.split():
        name = middle.split()[-1].lstrip("*")
        params[name] = f"{text} {continuation}".strip()
    return end


_READERS = {"google": _read_google, "numpy": _read_numpy, "sphinx": _read_sphinx}
