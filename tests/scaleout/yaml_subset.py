"""A loader for the block-style YAML subset a Kubernetes manifest is written in (mappings,
sequences, plain and quoted scalars, comments, `---` between documents), so the tests can read
examples/deploy/k8s.yaml without PyYAML. Anything outside the subset (flow style `[a]`/`{a}`,
anchors, multi-line scalars) raises ValueError rather than being read wrongly."""

from __future__ import annotations

import re
from typing import Any

_Line = tuple[int, str]  # (indentation, content)
_DOCUMENT = re.compile(r"(?m)^---\s*$")
_COMMENT = re.compile(r"""(?:^|\s)#(?=(?:[^"']|"[^"]*"|'[^']*')*$)""")


def load_all(text: str) -> list[Any]:
    """Every document of `text`. Raises ValueError on YAML outside the subset."""
    documents = []
    for chunk in _DOCUMENT.split(text):
        lines = _lines(chunk)
        if lines:
            value, end = _block(lines, 0)
            if end != len(lines):
                raise ValueError(f"unexpected indentation: {lines[end][1]!r}")
            documents.append(value)
    return documents


def _lines(chunk: str) -> list[_Line]:
    found = []
    for raw in chunk.splitlines():
        content = _COMMENT.split(raw, maxsplit=1)[0].rstrip()
        if content.strip():
            found.append((len(content) - len(content.lstrip(" ")), content.strip()))
    return found


def _block(lines: list[_Line], at: int) -> tuple[Any, int]:
    """The sequence or mapping starting at line `at`, and the index of the line after it."""
    if lines[at][1] == "-" or lines[at][1].startswith("- "):
        return _sequence(lines, at)
    return _mapping(lines, at)


def _sequence(lines: list[_Line], at: int) -> tuple[list[Any], int]:
    indent, items = lines[at][0], []
    while at < len(lines) and lines[at][0] == indent and lines[at][1].startswith("-"):
        rest = lines[at][1][1:].strip()
        if not rest:
            value, at = _block(lines, at + 1)
        elif _is_entry(rest):  # "- key: value" opens a mapping indented past the dash
            lines[at] = (indent + 2, rest)
            value, at = _mapping(lines, at)
        else:
            value, at = _scalar(rest), at + 1
        items.append(value)
    return items, at


def _mapping(lines: list[_Line], at: int) -> tuple[dict[str, Any], int]:
    indent, entries = lines[at][0], {}
    while at < len(lines) and lines[at][0] == indent:
        if not _is_entry(lines[at][1]):
            raise ValueError(f"not a mapping entry: {lines[at][1]!r}")
        key, _, rest = lines[at][1].partition(":")
        at += 1
        if rest.strip():
            entries[key.strip()] = _scalar(rest.strip())
        elif at < len(lines) and (
            lines[at][0] > indent or (lines[at][0] == indent and lines[at][1].startswith("-"))
        ):
            entries[key.strip()], at = _block(lines, at)
        else:
            entries[key.strip()] = None
    return entries, at


def _is_entry(content: str) -> bool:
    return re.match(r"""^[^"'\s][^:]*:(\s|$)""", content) is not None


def _scalar(text: str) -> Any:
    if text[0] in "\"'":
        if len(text) < 2 or text[-1] != text[0]:
            raise ValueError(f"unterminated string: {text!r}")
        return text[1:-1]
    if text[0] in "[{&*|>!":
        raise ValueError(f"outside the YAML subset: {text!r}")
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    return {"true": True, "false": False, "null": None, "~": None}.get(text, text)
