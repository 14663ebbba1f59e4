"""mypy --strict run on a snippet, for the tests that check what the public API's types let
through: the snippet's own file in a fresh folder, no cache."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Checked:
    returncode: int
    stdout: str

    @property
    def error_lines(self) -> set[int]:
        """The snippet lines mypy reported an error on."""
        return {int(line.split(":")[1]) for line in self.stdout.splitlines() if ": error:" in line}


def mypy_strict(snippet: str, folder: Path) -> Checked:
    path = folder / "snippet.py"
    path.write_text(snippet)
    checked = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(path)],
        capture_output=True,
        text=True,
        check=False,
        cwd=folder,
    )
    return Checked(checked.returncode, checked.stdout)
