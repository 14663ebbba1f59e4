"""A server's text made safe for a terminal: every character a terminal would obey instead of
showing is written so that it shows.

The host's approval titles are built with `one_line`; everything the `mcpkit` command prints
that a server (or a model) chose goes through `visible`: names,
titles, descriptions, results, resource text, prompt messages, log messages, task statuses,
error messages. What it rewrites:

- C0 controls and DEL in caret notation, as `cat -v` and `less` show them: ESC is `^[`, BEL
  `^G`, so `ESC]0;title BEL` prints as `^[]0;title^G` (the window keeps its title) and
  `ESC[2J` as `^[[2J` (the screen is not cleared);
- C1 controls (U+0080-U+009F: U+009B is a CSI, U+009D an OSC, on terminals that read them),
  the bidi controls (U+200E, U+200F, U+061C, U+202A-U+202E, U+2066-U+2069), the line and
  paragraph separators (U+2028, U+2029) and lone surrogates as `<U+202E>` and the like.

In text of several lines (content, results, resources, descriptions, log messages) a newline and
a tab stay as they are, and a CR just before a newline (a Windows line end) is dropped; anywhere
else, and a lone CR always (it would print over the line), they are shown too (`^J`, `^I`,
`^M`). Every replacement is plain ASCII, so the result is the same when it passes through again.

`--json` prints exact JSON: `json_text` writes C1, DEL, the bidi controls and the separators as
`\\u` escapes (orjson escapes the C0 controls itself), which parse to the same strings.
"""

from __future__ import annotations

import logging

__all__ = ["VisibleFormatter", "json_text", "one_line", "visible"]

_BIDI = (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))
_UNICODE = (*range(0x80, 0xA0), *_BIDI, 0x2028, 0x2029)
_CARET = {c: "^" + chr(c ^ 0x40) for c in (*range(0x20), 0x7F)}  # ESC -> ^[, DEL -> ^?
_ONE_LINE = {
    **_CARET,
    **{c: f"<U+{c:04X}>" for c in (*_UNICODE, *range(0xD800, 0xE000))},
}
_LINES = {c: shown for c, shown in _ONE_LINE.items() if c not in (0x09, 0x0A)}
_JSON = {c: f"\\u{c:04x}" for c in (0x7F, *_UNICODE)}


def visible(text: str, *, lines: bool = False) -> str:
    """`text` with every control character shown rather than obeyed (module docstring).
    `lines`: text of several lines, whose newlines and tabs stay."""
    if not lines:
        return text.translate(_ONE_LINE)
    return text.replace("\r\n", "\n").translate(_LINES)


def one_line(text: str, limit: int = 160) -> str:
    """`text` on one line: made visible, runs of spaces (and newlines, tabs) as one space, cut
    to `limit` characters with a `…`."""
    shown = " ".join(visible(text, lines=True).split())
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


def json_text(encoded: str) -> str:
    """JSON text (as orjson writes it) with the characters a terminal obeys inside its strings
    written as `\\u` escapes: the same JSON value, safe to print."""
    return encoded.translate(_JSON)


class VisibleFormatter(logging.Formatter):
    """Log lines on a terminal: a message carrying a server's text cannot drive it."""

    def format(self, record: logging.LogRecord) -> str:
        return visible(super().format(record), lines=True)
