"""Counting a program's instructions with callgrind: the one runner of the instruction
benchmarks (app_instructions.py, core_cost.py). Instructions, unlike time, do not move with
the machine's load."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path


def instructions(program: str, arguments: list[str], src: str | None) -> int:
    """Instructions `python program arguments...` executes under callgrind, with the mcpkit
    package imported from `src` when given (else the installed one)."""
    env = dict(os.environ, PYTHONHASHSEED="0")  # the same dict and set layouts every run
    if src is not None:
        env["PYTHONPATH"] = src
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
        command += [sys.executable, program, *arguments]
        subprocess.run(command, env=env, check=True, capture_output=True)
        totals = re.search(rb"^(?:summary|totals): (\d+)", out.read_bytes(), re.MULTILINE)
        assert totals is not None, "no totals in the callgrind output"
        return int(totals.group(1))
