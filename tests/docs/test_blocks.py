"""The doc runner's own promises: no Python block of the docs escapes it, and a block's
directives are read from the comments right above it."""

from __future__ import annotations

import re
from pathlib import Path

from tests.docs.blocks import PAGES, blocks_of, runnable_blocks


def test_every_python_block_of_every_page_is_run() -> None:
    fences = sum(len(re.findall(r"^```python\s*$", p.read_text(), re.M)) for p in PAGES)
    python = [block for block in runnable_blocks() if block.language == "python"]
    assert len(python) == fences > 40


def test_a_skip_needs_a_reason() -> None:
    for block in runnable_blocks():
        reason = block.get("skip")
        assert reason is None or len(reason) > 20, block.id


def test_directives_come_from_the_comments_just_above(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "<!-- docs: serve x --port {port} -->\n"
        "<!-- docs: file a.py; expect ok -->\n"
        "```python\nprint('ok')\n```\n\n"
        "<!-- docs: llm -->\n\ntext between\n```python\npass\n```\n"
    )
    first, second = blocks_of(page)
    assert first.directives == [("serve", "x --port {port}"), ("file", "a.py"), ("expect", "ok")]
    assert first.code == "print('ok')\n" and first.line == 3
    assert second.directives == []  # the comment is not right above it
