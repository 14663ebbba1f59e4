"""The MCP Inspector CLI (@modelcontextprotocol/inspector 2.12.0, which speaks tasks in both
eras) drives mcpkit's task tools: a tool with taskSupport "required" runs as a task over stdio
(2025-11-25: its result carries the related-task `_meta`) and over Streamable HTTP at
2026-07-28 (a client without the extension would get -32021 instead of the result)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.http.servers import script_serving
from tests.peers import node_env, npm_command

ROOT = Path(__file__).resolve().parents[1]
TASKS = str(ROOT / "tests" / "fixtures" / "task_server.py")


def inspector(tmp_path: Path, *args: str) -> dict[str, object]:
    env = {**os.environ, **node_env(), "HOME": str(tmp_path)}  # its catalog stays in tmp
    done = subprocess.run(
        [*npm_command("mcp-inspector"), "--cli", *args, "--format", "json"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    answer: dict[str, object] = json.loads(done.stdout)["result"]
    return answer


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with script_serving(TASKS) as address:
        yield address


def call(*tool: str) -> list[str]:
    name, *arguments = tool
    return ["--method", "tools/call", "--tool-name", name, "--tool-arg", *arguments]


def test_the_inspector_runs_a_required_task_tool_over_stdio(tmp_path: Path) -> None:
    result = inspector(tmp_path, sys.executable, TASKS, *call("nightly", "name=db"))
    assert result["content"] == [{"type": "text", "text": "nightly db done"}]
    meta = result["_meta"]
    assert isinstance(meta, dict) and meta["io.modelcontextprotocol/related-task"]["taskId"]


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_the_inspector_runs_task_tools_over_http(url: str, era: str, tmp_path: Path) -> None:
    era_flag = ["--protocol-era", era]
    required = inspector(tmp_path, url, *era_flag, *call("nightly", "name=x"))
    assert required["content"] == [{"type": "text", "text": "nightly x done"}]
    optional = inspector(tmp_path, url, *era_flag, *call("count", "to=3"))
    assert optional["content"] == [{"type": "text", "text": "counted to 3"}]
