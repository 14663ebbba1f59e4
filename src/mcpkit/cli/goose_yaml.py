"""One extension added to Goose's config.yaml, edited as text: no YAML library needed, and
every other line (the provider, other extensions, comments) kept as it was.

The entry is written in block style with JSON values (a JSON string, list or object is a YAML
flow scalar or collection, so the result is valid YAML whatever the text holds). Handled: no
file, a file without `extensions:`, a block-style `extensions:` mapping (an entry of the same
name is replaced), and `extensions: {}` / `extensions:` with nothing under it. Anything else
(a flow-style mapping holding entries) is refused rather than guessed at.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson

from mcpkit.cli.loading import UsageError

_TOP_KEY = re.compile(r"^extensions\s*:\s*(?P<rest>[^#]*?)\s*(#.*)?$")


def with_extension(text: str, name: str, entry: dict[str, Any], where: Path) -> str:
    """`text` with `extensions.<name>` set to `entry`. Raises UsageError for a file whose
    `extensions` cannot be edited safely as text."""
    lines = text.splitlines()
    start = _section_start(lines, where)
    if start is None:
        tail = [""] if lines and lines[-1].strip() else []
        return "\n".join([*lines, *tail, "extensions:", *_block(name, entry, "  ")]) + "\n"
    end = _section_end(lines, start)
    indent = _child_indent(lines[start + 1 : end])
    found = _find_entry(lines, start + 1, end, name, indent)
    block = _block(name, entry, indent)
    if found is None:
        at = end
        while at > start + 1 and not lines[at - 1].strip():  # before the blank lines
            at -= 1
        lines[at:at] = block
    else:
        lines[found[0] : found[1]] = block
    return "\n".join(lines) + "\n"


def _section_start(lines: list[str], where: Path) -> int | None:
    for number, line in enumerate(lines):
        match = _TOP_KEY.match(line)
        if match is None:
            continue
        rest = match["rest"]
        if rest in ("", "{}", "null", "~"):
            lines[number] = "extensions:"
            return number
        raise UsageError(
            f"{where}: `extensions` is written inline ({rest[:40]}); not changing it "
            "(write it as a block mapping, or add the entry by hand)"
        )
    return None


def _indent_of(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _is_content(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith("#")


def _section_end(lines: list[str], start: int) -> int:
    """The line after the last one of the `extensions:` mapping (next top-level key)."""
    for number in range(start + 1, len(lines)):
        if _is_content(lines[number]) and _indent_of(lines[number]) == 0:
            return number
    return len(lines)


def _child_indent(section: list[str]) -> str:
    for line in section:
        if _is_content(line):
            return " " * _indent_of(line)
    return "  "


def _find_entry(
    lines: list[str], first: int, end: int, name: str, indent: str
) -> tuple[int, int] | None:
    """(first line, line after the last) of the entry called `name`, plain or quoted."""
    keys = {f"{indent}{key}:" for key in (name, orjson.dumps(name).decode(), f"'{name}'")}
    for number in range(first, end):
        line = lines[number]
        if not any(line.rstrip() == key or line.startswith(key + " ") for key in keys):
            continue
        last = number + 1
        while last < end and (
            not _is_content(lines[last]) or _indent_of(lines[last]) > len(indent)
        ):
            last += 1
        while last > number + 1 and not lines[last - 1].strip():  # keep blank lines after
            last -= 1
        return number, last
    return None


def _block(name: str, entry: dict[str, Any], indent: str) -> list[str]:
    inner = indent + "  "
    values = [f"{inner}{key}: {orjson.dumps(value).decode()}" for key, value in entry.items()]
    return [f"{indent}{orjson.dumps(name).decode()}:", *values]
