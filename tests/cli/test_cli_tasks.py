"""`mcpkit call` follows a tool call that runs as a task (a status line on a terminal), and
`mcpkit task get|result|cancel TARGET ID` reaches a task later: real subprocesses, a real HTTP
server on 127.0.0.1, a real pseudo-terminal."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcpkit import Client
from tests.http.servers import script_serving

from .test_cli import mcpkit

ROOT = Path(__file__).resolve().parents[2]
TASKS = str(ROOT / "tests" / "fixtures" / "task_server.py")


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with script_serving(TASKS) as address:
        yield address


def test_call_runs_a_required_task_tool_of_a_handshake_server() -> None:
    done = mcpkit("call", TASKS, "nightly", "name=db", "--mode", "handshake")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "nightly db done\n"


def test_call_follows_the_task_a_modern_server_answers_with(url: str) -> None:
    done = mcpkit("call", url, "count", "to=2", "--json")
    assert done.returncode == 0, done.stderr
    assert '"text": "counted to 2"' in done.stdout


async def test_task_get_result_and_cancel_reach_a_task_later(url: str) -> None:
    async with Client(url, mode="2026-07-28") as client:
        running = await client.start_tool("forever")
        quick = await client.start_tool("count", {"to": 1})
    modern = ("--mode", "2026-07-28")  # the era is not what is tested here
    got = mcpkit("task", "get", url, running.task_id, *modern)
    assert got.returncode == 0 and got.stdout.startswith(f"task {running.task_id}: working")
    cancelled = mcpkit("task", "cancel", url, running.task_id, *modern)
    assert cancelled.stdout.startswith(f"task {running.task_id}: cancelled"), cancelled.stderr
    result = mcpkit("task", "result", url, quick.task_id, *modern)
    assert result.returncode == 0 and result.stdout == "counted to 1\n", result.stderr
    unknown = mcpkit("task", "get", url, "no-such-task", *modern)
    assert unknown.returncode == 4 and "Task not found" in unknown.stderr
    bad = mcpkit("task", "stop", url, "x")
    assert bad.returncode == 2 and "invalid choice" in bad.stderr


def test_a_terminal_shows_the_status_of_the_task_while_it_runs(url: str) -> None:
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "mcpkit", "call", url, "count", "to=6"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=follower,
        cwd=ROOT,
    )
    os.close(follower)
    seen = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    os.close(leader)
    out, _ = process.communicate(timeout=30)
    assert process.returncode == 0 and out == b"counted to 6\n"
    assert b"task " in seen and b": working - counted " in seen and b" of 6" in seen
