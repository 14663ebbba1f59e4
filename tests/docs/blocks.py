"""The code blocks of README.md and docs/*.md, with what each needs to run.

A block is a fenced ```python (or ```bash) block. The HTML comments on the lines right before
it (invisible when the Markdown is rendered) say what it needs, `;` between directives:

    <!-- docs: file server.py -->             saved as server.py in the page's folder (before
                                              any block of the page runs), checked by loading it
    <!-- docs: copy examples/x.py server.py -->  a file of the repository copied into the
                                              page's folder (at the start, as `file`)
    <!-- docs: serve mcpkit run server.py --transport http --port {port} -->
                                              a server started before the block, stopped after;
                                              {port} is a free port, {root} the repository; the
                                              block's 8000 becomes that port
    <!-- docs: listens -->                    the block serves forever (on 8000, or the port
                                              given: `listens 9000`, which becomes a free
                                              port as 8000 does): it passes once it answers
                                              HTTP, and is stopped then
    <!-- docs: llm -->                        ANTHROPIC_BASE_URL / OPENAI_BASE_URL point at the
                                              fake API (tests/docs/llm_server.py)
    <!-- docs: redis -->                      a real redis-server; the block's redis://... URL
                                              becomes its URL
    <!-- docs: stdin TEXT -->                 what the block reads (\n for a newline)
    <!-- docs: args A B -->                   its command-line arguments ({port} as above)
    <!-- docs: pytest -->                     run with pytest (a test file)
    <!-- docs: expect TEXT -->                its output must contain TEXT
    <!-- docs: skip REASON -->                not run, for the reason given (shown as a skip)

Nothing else of a block is changed: it runs as a reader runs it (no directive rewrites its
text). A ```python block without directives runs as a program (`python block.py`) in the page's
folder and must exit 0. A ```bash block runs only when it has directives (`<!-- docs: sh -->`
at least): it runs with bash -e in the page's folder, where `examples/` is the repository's, with
.venv/bin first on PATH.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_FENCE = re.compile(r"^```(\w*)\s*$")
_DIRECTIVE = re.compile(r"^<!-- docs: (.*) -->\s*$")


@dataclass
class Block:
    page: Path
    line: int  # of the opening fence, 1-based
    language: str
    code: str
    directives: list[tuple[str, str]] = field(default_factory=list)

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    def get(self, name: str) -> str | None:
        return next((value for key, value in self.directives if key == name), None)

    def all(self, name: str) -> list[str]:
        return [value for key, value in self.directives if key == name]


def blocks_of(page: Path) -> list[Block]:
    """Every fenced block of `page` in order, with the directives just above it."""
    lines = page.read_text().splitlines()
    found: list[Block] = []
    index = 0
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        if opening is None:
            index += 1
            continue
        end = index + 1
        while end < len(lines) and not lines[end].startswith("```"):
            end += 1
        code = "\n".join(lines[index + 1 : end]) + "\n"
        found.append(Block(page, index + 1, opening.group(1), code, _directives(lines, index)))
        index = end + 1
    return found


def _directives(lines: list[str], fence: int) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    above = fence - 1
    while above >= 0 and (match := _DIRECTIVE.match(lines[above])):
        for part in reversed(match.group(1).split(";")):
            name, _, value = part.strip().partition(" ")
            found.insert(0, (name, value.strip()))
        above -= 1
    return found


def runnable_blocks() -> list[Block]:
    """The Python blocks of every page, and the shell blocks that say how to run them."""
    every = [block for page in PAGES for block in blocks_of(page)]
    return [b for b in every if b.language == "python" or (b.language == "bash" and b.directives)]
