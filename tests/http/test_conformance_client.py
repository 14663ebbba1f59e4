"""The official conformance suite (0.1.16) scores the mcpkit client on its HTTP scenarios.

Scenarios that need OAuth belong to the authorization issue. Each run must pass with no
failures and no warnings.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.peers import node_env, npm_command

ROOT = Path(__file__).resolve().parents[2]
CLIENT = f"{sys.executable} {ROOT / 'tests' / 'http' / 'conformance_client.py'}"


@pytest.mark.parametrize(
    "scenario", ["initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry"]
)
def test_client_scenario_passes_without_warnings(scenario: str) -> None:
    command = [*npm_command("conformance"), "client", "--command", CLIENT, "--scenario", scenario]
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=ROOT,
        env={**os.environ, **node_env()},
    )
    report = done.stdout + done.stderr
    assert done.returncode == 0, report
    assert " 0 failed, 0 warnings" in report, report
    assert "OVERALL: PASSED" in report, report
