"""The README's promises: its commands match CI, its demo and its snippets really run."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from mcpkit import Client

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def code_blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README, flags=re.DOTALL)


def test_ci_runs_exactly_the_readme_test_command() -> None:
    bash = code_blocks("bash")
    test_command = next(block.strip() for block in bash if "scripts/test.sh" in block)
    ci_script = (ROOT / ".ci" / "run").read_text()
    assert test_command in ci_script.splitlines()


def test_demo_command_prints_real_tool_results() -> None:
    bash = code_blocks("bash")
    demo = next(block.strip() for block in bash if "examples/demo_server.py" in block)
    # The install step is the same as the test command's; run what follows it.
    steps = demo.split(" && ")
    assert steps[:2] == ["python3 -m venv .venv", ".venv/bin/pip install -q -e ."]
    out = subprocess.run(
        " && ".join(steps[2:]),
        shell=True,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        cwd=ROOT,
    )
    lines = out.stdout.splitlines()
    listed = [line.split()[0] for line in lines[:-1] if line[:1].isalpha()]
    assert listed == sorted(listed) and {"add", "greet", "countdown"} <= set(listed)
    assert lines[-1] == "5"


def test_demo_client_example_prints_real_tool_results() -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "demo_client.py")],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    assert "add(2, 3) = 5" in out.stdout
    assert "greet: Hello, world!" in out.stdout


async def test_readme_server_snippet_serves_what_the_client_snippet_calls(tmp_path: Path) -> None:
    server_code, client_code = code_blocks("python")[:2]
    server_file = tmp_path / "server.py"
    server_file.write_text(server_code)
    async with Client([sys.executable, str(server_file)]) as client:
        result = await client.call_tool("add", {"a": 2, "b": 3})
        assert result.content[0].text == "5"  # type: ignore[union-attr]
        greeting = await client.call_tool("greet", {"name": "Ada"})
        assert greeting.content[0].text == "Hello, Ada!"  # type: ignore[union-attr]
    # The client snippet, pointed at the server file, prints the tool names and the sum.
    client_file = tmp_path / "client.py"
    client_file.write_text(
        client_code.replace('["python", "server.py"]', repr([sys.executable, str(server_file)]))
    )
    out = subprocess.run(
        [sys.executable, str(client_file)], capture_output=True, text=True, timeout=30, check=True
    )
    assert out.stdout.strip() == "['add', 'greet'] 5"
