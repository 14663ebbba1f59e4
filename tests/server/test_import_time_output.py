"""A server file that prints while it is imported still speaks clean MCP on stdout: `mcpkit run`
(and `_serve_module.py`, which serves files that never import mcpkit) import the user's code
with stdout pointing at stderr, then give stdout back to the protocol (issue 23, bug 2).

Every test runs the real command in a subprocess, as a client would start it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mcpkit.cli import loading
from tests.cli.test_cli import mcpkit

SERVE_MODULE = str(Path(loading.__file__).with_name("_serve_module.py"))
# Three ways to write to stdout: print(), fd 1 itself, and a write without a newline left in
# the buffer (which, flushed when serving starts, would glue itself to the first answer).
NOISE = """
import os
import sys

print("noise: print at import time")
os.write(1, b"noise: straight to fd 1 ")
sys.stdout.write("noise: buffered, no newline")
"""
SERVER = """
from mcpkit import Server

app = Server("noisy")


@app.tool()
def add(a: int, b: int) -> int:
    return a + b
"""
# The handshake era, so that an answer glued to the noise is lost rather than replaced by the
# auto mode's fallback; a lost answer fails the command at the timeout (a fixed server answers
# in milliseconds).
CLIENT = ("--mode", "handshake", "--timeout", "20")
PRINTED = ("noise: print at import time", "noise: buffered", "noise: straight to fd 1")


def mcpkit_file(tmp_path: Path) -> Path:
    """A file that imports mcpkit: served by `mcpkit run FILE`."""
    path = tmp_path / "noisy_server.py"
    path.write_text(NOISE + SERVER)
    return path


def foreign_file(tmp_path: Path) -> Path:
    """A file that never imports mcpkit itself (it re-exports a server from a module that
    does): served by `_serve_module.py`. Both print."""
    (tmp_path / "noisy_app.py").write_text(NOISE + SERVER)
    path = tmp_path / "reexport.py"
    path.write_text('print("noise: the re-exporting file")\nfrom noisy_app import app\n')
    return path


@pytest.mark.parametrize("make", [mcpkit_file, foreign_file])
def test_list_and_call_work_on_a_file_that_prints_at_import(tmp_path: Path, make: object) -> None:
    path = str(make(tmp_path))  # type: ignore[operator]
    listed = mcpkit("list", path, "--json", *CLIENT)
    assert listed.returncode == 0, listed.stderr
    assert [tool["name"] for tool in json.loads(listed.stdout)["tools"]] == ["add"]
    called = mcpkit("call", path, "add", "a=1", "b=2", *CLIENT)
    assert (called.returncode, called.stdout) == (0, "3\n"), called.stderr


def exchange(argv: list[str]) -> subprocess.CompletedProcess[str]:
    """Initialize, list the tools and hang up, over the server's stdin/stdout."""
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    lines = "".join(json.dumps(message) + "\n" for message in messages)
    return subprocess.run(
        argv, input=lines, capture_output=True, text=True, timeout=60, check=False
    )


@pytest.mark.parametrize(
    ("make", "command"),
    [
        (mcpkit_file, [sys.executable, "-m", "mcpkit", "run"]),
        (foreign_file, [sys.executable, SERVE_MODULE]),
    ],
)
def test_import_time_output_goes_to_stderr_and_stdout_is_only_mcp(
    tmp_path: Path, make: object, command: list[str]
) -> None:
    served = exchange([*command, str(make(tmp_path))])  # type: ignore[operator]
    answers = [json.loads(line) for line in served.stdout.splitlines()]
    assert [answer["id"] for answer in answers] == [1, 2], served.stderr
    assert [tool["name"] for tool in answers[1]["result"]["tools"]] == ["add"]
    for text in PRINTED:
        assert text in served.stderr
