"""The official conformance suite scores the mcpkit client (`conformance_client.py`).

Two suites: the released 0.1.16 on its HTTP client scenarios, and 0.2.0-alpha.12
(`conformance-next`) on exactly what a revision requires (`--requirements`): 2025-11-25 (the
handshake era) and 2026-07-28 (the modern era). Every scored client scenario that does not
need OAuth must pass with no failure and no warning; OAuth scenarios belong to the
authorization issue. The scored list is read from the suite, so a scenario added to a
requirement set fails here until it is looked at.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.peers import conformance_next, node_env, npm_command, scored_scenarios

ROOT = Path(__file__).resolve().parents[2]
CLIENT = f"{sys.executable} {ROOT / 'tests' / 'http' / 'conformance_client.py'}"
# Scored client scenarios without OAuth, per requirement set, and the era each must run in.
REQUIRED = {
    "2025-11-25": ["initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry"],
    "2026-07-28": [
        "tools_call",
        "request-metadata",
        "sep-2322-client-request-state",
        "http-standard-headers",
        "http-custom-headers",
        "http-invalid-tool-headers",
        "json-schema-ref-no-deref",
    ],
}
ERA = {"2025-11-25": "era: handshake 2025-11-25", "2026-07-28": "era: per-request 2026-07-28"}
UNSCORED = ["json-schema-2020-12-preservation"]  # added after release; we pass it anyway


def run(command: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **node_env()}
    return subprocess.run(
        command, capture_output=True, text=True, timeout=timeout, check=False, cwd=ROOT, env=env
    )


@pytest.mark.parametrize(
    "scenario", ["initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry"]
)
def test_client_scenario_passes_without_warnings(scenario: str) -> None:
    command = [*npm_command("conformance"), "client", "--command", CLIENT, "--scenario", scenario]
    done = run(command, 120)
    report = done.stdout + done.stderr
    assert done.returncode == 0, report
    assert " 0 failed, 0 warnings" in report, report
    assert "OVERALL: PASSED" in report, report


def checks_of(results: Path, scenario: str) -> tuple[list[dict[str, str]], str]:
    (folder,) = results.glob(f"{scenario}-20*")
    return json.loads((folder / "checks.json").read_text()), (folder / "stderr.txt").read_text()


@pytest.mark.parametrize("revision", sorted(REQUIRED))
def test_every_required_client_scenario_passes(revision: str, tmp_path: Path) -> None:
    scored = scored_scenarios("client", revision)
    assert [s for s in scored if not s.startswith("auth/")] == REQUIRED[revision]
    command = [*conformance_next(), "client", "--command", CLIENT, "--requirements", revision]
    done = run([*command, "-o", str(tmp_path)], 300)
    report = done.stdout + done.stderr
    for scenario in [*REQUIRED[revision], *UNSCORED]:
        checks, stderr = checks_of(tmp_path, scenario)
        bad = [c for c in checks if c["status"] in ("FAILURE", "WARNING")]
        assert not bad, f"{scenario}: {json.dumps(bad, indent=1)}\n{stderr}"
        assert any(c["status"] == "SUCCESS" for c in checks), scenario
        assert ERA[revision] in stderr, f"{scenario}: {stderr}\n{report}"
