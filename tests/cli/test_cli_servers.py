"""`mcpkit servers`: the servers of a real configuration file started as a host starts them,
their state for people and as JSON for scripts (a real subprocess, real servers)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from .test_cli import mcpkit

ROOT = Path(__file__).resolve().parents[2]
TASKS = str(ROOT / "tests" / "fixtures" / "task_server.py")


def in_home(home: Path) -> dict[str, str]:
    return {**os.environ, "HOME": str(home)}  # no user configuration can be found


def test_servers_shows_each_state_and_the_tools(tmp_path: Path) -> None:
    config = {
        "mcpServers": {
            "tasks": {"command": sys.executable, "args": [TASKS], "denyTools": ["forever"]},
            "gone": {"command": "no-such-mcp-server-command"},
            "bad": {"type": "websocket", "url": "ws://x"},
        }
    }
    (tmp_path / ".mcp.json").write_text(json.dumps(config))  # found without --config
    human = mcpkit("servers", cwd=tmp_path, env=in_home(tmp_path))
    assert human.returncode == 0, human.stderr
    words = " ".join(human.stdout.split())  # the reasons wrap to the terminal's width
    assert words.startswith("tasks ready: count, nightly gone failed: ")
    assert "'no-such-mcp-server-command' was not found bad failed: server 'bad'" in words
    assert words.endswith("field 'type': 'websocket' is not stdio, http or sse")
    machine = mcpkit("servers", "--json", cwd=tmp_path, env=in_home(tmp_path))
    rows = json.loads(machine.stdout)
    assert [(r["name"], r["state"], r["tools"]) for r in rows] == [
        ("tasks", "ready", ["count", "nightly"]),
        ("gone", "failed", []),
        ("bad", "failed", []),
    ]
    assert rows[0]["error"] is None and "not found" in rows[1]["error"]


def test_servers_without_a_configuration_is_a_usage_error(tmp_path: Path) -> None:
    done = mcpkit("servers", cwd=tmp_path, env=in_home(tmp_path))
    assert done.returncode == 2 and "no configuration found" in done.stderr


HYPHENATED = """
from mcpkit import Server

server = Server("files")
for name in ("read-text-file-contents", "write-file", "list-allowed-directories"):
    server.add_tool(lambda: "ok", name=name, description="a tool")
server.run()
"""


def test_the_table_keeps_names_whole_says_disabled_and_keeps_the_file_order(
    tmp_path: Path,
) -> None:
    (tmp_path / "files.py").write_text(HYPHENATED)
    config = {
        "mcpServers": {
            "broken": {"type": "websocket", "url": "ws://x"},
            "files": {"command": sys.executable, "args": [str(tmp_path / "files.py")]},
            "resting": {"command": sys.executable, "args": [TASKS], "disabled": True},
            "also-broken": {"command": 42},
        }
    }
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps(config))
    narrow = {**in_home(tmp_path), "COLUMNS": "48"}  # the tool list must wrap
    done = mcpkit("servers", "--config", str(path), cwd=tmp_path, env=narrow)
    assert done.returncode == 0, done.stderr
    rows = done.stdout.splitlines()
    names = [row.split()[0] for row in rows if not row.startswith(" ")]
    assert names == ["broken", "files", "resting", "also-broken"]  # as in the file
    words = [word.rstrip(",") for word in done.stdout.split()]
    for tool in ("read-text-file-contents", "write-file", "list-allowed-directories"):
        assert tool in words  # never broken at a hyphen
    resting = next(row for row in rows if row.startswith("resting"))
    assert resting.split(None, 1)[1] == "disabled (not started)"
    machine = json.loads(
        mcpkit("servers", "--json", "--config", str(path), cwd=tmp_path, env=narrow).stdout
    )
    assert [row["name"] for row in machine] == names
