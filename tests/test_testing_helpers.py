"""`mcpkit.testing`, the helpers users test their servers with: the example in docs/testing.md
runs as written, and each helper does what it says in both protocol eras."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from mcpkit import Server
from mcpkit.testing import call, connect, texts, tools_by_name

DOCS = Path(__file__).resolve().parents[1] / "docs" / "testing.md"


def test_the_documented_example_passes(tmp_path: Path) -> None:
    example = re.search(r"```python\n(.*?)```", DOCS.read_text(), re.S)
    assert example is not None
    (tmp_path / "test_weather.py").write_text(example.group(1))
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "asyncio_mode=auto"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "5 passed" in done.stdout


def paged_server() -> Server:
    server = Server("paged", page_size=2)
    for name in ("a", "b", "c", "d", "e"):
        server.add_tool(lambda name=name: f"I am {name}", name=name)

    @server.prompt()
    def greet(who: str) -> str:
        return f"hello {who}"

    @server.resource("note://one")
    def note() -> str:
        return "a note"

    return server


@pytest.mark.parametrize("era", ["handshake", "2026-07-28"])
async def test_helpers_in_both_eras(era: str) -> None:
    async with connect(paged_server(), era=era) as client:
        assert client.era == ("per-request" if era == "2026-07-28" else "handshake")
        assert sorted(await tools_by_name(client)) == ["a", "b", "c", "d", "e"]  # all pages
        assert texts(await call(client, "c")) == ["I am c"]
        assert texts(await client.call_tool("d")) == ["I am d"]  # a typed result too
        prompt = await client.request("prompts/get", {"name": "greet", "arguments": {"who": "x"}})
        assert texts(prompt) == ["hello x"]
        assert texts(await client.read_resource("note://one")) == ["a note"]
