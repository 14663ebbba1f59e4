"""The official conformance suite (0.1.16) scores the HTTP server: `server --suite all` against
the fixture in conformance_server.py must pass with no failures and no warnings (no
expected-failures file)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.peers import node_env, npm_command

from .servers import unused_port

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    port = unused_port()
    script = Path(__file__).with_name("conformance_server.py")
    process = subprocess.Popen([sys.executable, str(script), str(port)], cwd=ROOT)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        for _ in range(300):
            try:
                httpx.get(url, timeout=1)
                break
            except httpx.TransportError:
                time.sleep(0.02)
        yield url
    finally:
        process.terminate()
        process.wait(10)


def test_server_suite_passes_without_warnings(server_url: str) -> None:
    command = [*npm_command("conformance"), "server", "--url", server_url, "--suite", "all"]
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=ROOT,
        env={**os.environ, **node_env()},
    )
    report = done.stdout + done.stderr
    assert done.returncode == 0, report
    assert re.search(r"Total: \d+ passed, 0 failed", report), report
    assert "WARNING" not in report and "✗" not in report, report
