"""Text from servers and models, made safe and short for a terminal.

Every line goes through `visible.one_line`, so escape sequences, bidi overrides and other
control characters a server sends show as `^[`, `<U+202E>` and the like instead of redrawing
the prompt; long text is cut to a few lines with a note of what was left out.
"""

from __future__ import annotations

import io
from typing import Any

import orjson

from mcpkit.cli.render import content, width
from mcpkit.host.visible import one_line

JSONObject = dict[str, Any]


def safe_lines(text: str) -> list[str]:
    """`text` as lines a terminal shows as they are (control characters made visible)."""
    return [one_line(part, limit=1_000_000) if part.strip() else "" for part in text.split("\n")]


def shortened(text: str, *, lines: int = 5, indent: str = "  ") -> list[str]:
    """At most `lines` lines of `text`, each cut to the terminal's width, indented; a last
    line says how many more there were (or that lines were cut)."""
    room = max(20, width() - len(indent) - 1)
    all_lines = safe_lines(text.rstrip("\n"))
    kept = all_lines[:lines]
    out = [indent + (row if len(row) <= room else row[: room - 1] + "…") for row in kept]
    left = len(all_lines) - len(kept)
    if left:
        out.append(f"{indent}… {left} more line{'s' if left != 1 else ''}")
    return out


def result_text(result: JSONObject) -> str:
    """A tool result (wire form) as the text a person reads: its content blocks (text as
    text, others summarized), else its structured content as JSON."""
    out = io.StringIO()
    if result.get("content"):
        content(result["content"], out)
    elif "structuredContent" in result:
        out.write(orjson.dumps(result["structuredContent"], option=orjson.OPT_INDENT_2).decode())
    return out.getvalue().rstrip("\n") or "(no content)"


def message_text(message: JSONObject) -> str:
    """A sampling message's content as text (blocks other than text summarized)."""
    blocks = message.get("content")
    blocks = blocks if isinstance(blocks, list) else [blocks]
    parts = []
    for block in blocks:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif block.get("type") == "tool_use":
            arguments = orjson.dumps(block.get("input")).decode()
            parts.append(f"[uses the tool {block.get('name')} {arguments}]")
        elif block.get("type") == "tool_result":
            parts.append("[a tool result]")
        else:
            parts.append(f"[{block.get('type')} {block.get('mimeType', '')}]".replace(" ]", "]"))
    return "\n".join(parts)


def as_json(value: Any) -> str:
    return orjson.dumps(value).decode()
