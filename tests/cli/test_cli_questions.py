"""`mcpkit call` (and read, prompt) answer a server's question (elicitation): on a terminal
the person answers the form, piped the answers are stdin's lines, and with no input at all the
question is cancelled with a note on stderr. Real subprocesses and a real pseudo-terminal,
against examples/long_task.py (whose tool asks midway, inside a task)."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LONG_TASK = str(ROOT / "examples" / "long_task.py")
CALL = [sys.executable, "-m", "mcpkit", "call", LONG_TASK, "build_report", "topic=tides"]
FAST = "seconds_per_stage=0.05"


@pytest.mark.parametrize("mode", ["auto", "handshake"])
def test_piped_answers_are_read_from_stdin(mode: str) -> None:
    done = subprocess.run(
        [*CALL, FAST, "--mode", mode],
        input="yes\n\n",  # the field, then Enter: send it
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Report on tides with charts: 4 stages done.\n"
    assert "Include charts in the report on tides?" in done.stderr  # asked on stderr


def test_with_no_input_the_question_is_cancelled_and_said() -> None:
    done = subprocess.run(
        [*CALL, FAST],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Report on tides: 4 stages done.\n"
    assert "no answer can come (stdin ended): answered 'cancel'" in done.stderr


def test_on_a_terminal_the_person_answers() -> None:
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [*CALL, FAST], stdin=follower, stdout=subprocess.PIPE, stderr=follower, cwd=ROOT
    )
    os.close(follower)
    seen = b""
    answered = []
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
        if b"charts> " in seen and not answered:
            answered.append(os.write(leader, b"no\n"))
        elif b"[Y/n]: " in seen and len(answered) == 1:
            answered.append(os.write(leader, b"y\n"))
    os.close(leader)
    out, _ = process.communicate(timeout=30)
    assert process.returncode == 0 and out == b"Report on tides: 4 stages done.\n"
    assert b"charts * (boolean)" in seen and b'to send: {"charts":false}' in seen
