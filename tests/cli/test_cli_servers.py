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
