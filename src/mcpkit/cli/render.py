"""Output for people: aligned tables, wrapped text, a progress bar on a terminal.

Every server-provided string printed here goes through `visible` (host/visible.py); JSON
through `json_text`.
"""

from __future__ import annotations

import shutil
import sys
import textwrap
from typing import Any, TextIO

import orjson

from mcpkit.cli.exits import EXIT_TOOL_ERROR
from mcpkit.host.visible import json_text, visible

JSONObject = dict[str, Any]


def width() -> int:
    return max(40, shutil.get_terminal_size((100, 24)).columns)


def table(rows: list[tuple[str, str]], out: TextIO) -> None:
    """Two columns: on a terminal, a name and text wrapped to the terminal's width beside
    it; piped, one line per row, `name<TAB>text` (for grep, cut and awk, never wrapped).
    Both are made visible (a server's names and descriptions)."""
    if not rows:
        return
    rows = [(visible(name), visible(text, lines=True)) for name, text in rows]
    if not _is_terminal(out):
        for name, text in rows:
            out.write(f"{name}\t{' '.join(text.split())}\n")
        return
    left = min(max(len(name) for name, _ in rows), 32)
    room = max(20, width() - left - 2)
    for name, text in rows:
        # Names (tools, servers, commands) hold hyphens: break lines at spaces only.
        words = " ".join(text.split())
        lines = textwrap.wrap(words, room, break_on_hyphens=False, break_long_words=False)
        lines = lines or [""]
        out.write(f"{name:<{left}}  {lines[0]}\n")
        for more in lines[1:]:
            out.write(f"{'':<{left}}  {more}\n")


def _is_terminal(out: TextIO) -> bool:
    try:
        return out.isatty()
    except (AttributeError, ValueError):  # closed, or no file at all
        return False


def as_json(value: Any, out: TextIO) -> None:
    """`value` as indented JSON, exact, with what a terminal obeys escaped (`json_text`)."""
    out.write(json_text(orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()) + "\n")


def content(blocks: list[dict[str, Any]], out: TextIO) -> None:
    """Tool results and prompt messages: text as text, everything else as a short summary
    (all of it made visible)."""
    for block in blocks:
        kind = block.get("type")
        if kind == "text":
            out.write(visible(str(block.get("text", "")), lines=True) + "\n")
        elif kind in ("image", "audio"):
            size = len(block.get("data", "")) * 3 // 4
            out.write(visible(f"[{kind} {block.get('mimeType', '?')}, {size} bytes]") + "\n")
        elif kind == "resource_link":
            out.write(visible(f"[link {block.get('uri')}] {block.get('name', '')}") + "\n")
        elif kind == "resource":
            resource = block.get("resource", {})
            if "text" in resource:
                out.write(visible(str(resource["text"]), lines=True) + "\n")
            else:
                out.write(visible(f"[resource {resource.get('uri')}, binary]") + "\n")
        else:
            as_json(block, out)


class ProgressBar:
    """A one-line bar on stderr when it is a terminal; silent otherwise."""

    def __init__(self, stream: TextIO = sys.stderr) -> None:
        self._stream = stream
        self._shown = False

    def update(self, progress: float, total: float | None, message: str | None) -> None:
        if not self._stream.isatty():
            return
        label = f" {visible(message)}" if message else ""
        if total:
            filled = int(30 * min(progress / total, 1.0))
            bar = "#" * filled + "-" * (30 - filled)
            line = f"[{bar}] {progress:g}/{total:g}{label}"
        else:
            line = f"{progress:g}{label}"
        self._stream.write("\r" + line[: width() - 1].ljust(width() - 1))
        self._stream.flush()
        self._shown = True

    def status(self, text: str) -> None:
        """A line of text in place of the bar (a task's status)."""
        if not self._stream.isatty():
            return
        text = visible(text)
        self._stream.write("\r" + text[: width() - 1].ljust(width() - 1))
        self._stream.flush()
        self._shown = True

    def close(self) -> None:
        if self._shown:
            self._stream.write("\r" + " " * (width() - 1) + "\r")
            self._stream.flush()


def print_result(result: JSONObject, json: bool) -> int:
    """A tool result on stdout; the exit code it means."""
    if json:
        as_json(result, sys.stdout)
    elif result.get("content"):
        content(result["content"], sys.stdout)
    elif "structuredContent" in result:
        as_json(result["structuredContent"], sys.stdout)
    return EXIT_TOOL_ERROR if result.get("isError") else 0
