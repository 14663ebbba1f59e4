"""The official conformance suite scores the OAuth client (`conformance_auth_client.py`).

Two suites: 0.2.0-alpha.12 (`conformance-next`) on exactly what a revision requires
(`--requirements 2025-11-25` and `2026-07-28`), and the released 0.1.16 on its auth suites.
Every scored `auth/*` client scenario, and the client_credentials extension scenarios, must
pass with no failure and no warning. The scored lists are read from the suites, so a scenario
added to a requirement set fails here until it is looked at.

Scenarios in REFUSING test an attack or a dead end: the client must stop (exit 1, naming the
failure); the others must end connected, in the era the revision runs at.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.peers import conformance_next, node_env, npm_command, scored_scenarios

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]
CLIENT = f"{sys.executable} {ROOT / 'tests' / 'auth' / 'client' / 'conformance_auth_client.py'}"
COMMON = [
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/basic-cimd",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
]
REQUIRED = {
    "2025-11-25": COMMON,
    "2026-07-28": [
        *COMMON,
        "auth/resource-mismatch",
        "auth/offline-access-scope",
        "auth/offline-access-not-supported",
        "auth/authorization-server-migration",
        "auth/iss-supported",
        "auth/iss-not-advertised",
        "auth/iss-supported-missing",
        "auth/iss-wrong-issuer",
        "auth/iss-unexpected",
        "auth/iss-normalized",
        "auth/metadata-issuer-mismatch",
    ],
}
# Extension scenarios we pass; run (never scored) with every requirement set.
EXTENSIONS = [
    "auth/client-credentials-jwt",
    "auth/client-credentials-basic",
    "auth/enterprise-managed-authorization",
    "auth/wif-jwt-bearer",
    "auth/dpop",
    "auth/dpop-nonce",
]
REFUSING = {
    "auth/scope-retry-limit",
    "auth/resource-mismatch",
    "auth/iss-supported-missing",
    "auth/iss-wrong-issuer",
    "auth/iss-unexpected",
    "auth/iss-normalized",
    "auth/metadata-issuer-mismatch",
}
ERA = {"2025-11-25": "era: handshake 2025-11-25", "2026-07-28": "era: per-request 2026-07-28"}
OLD_SUITES = {  # 0.1.16: suite -> its auth scenarios we run
    "auth": COMMON,
    "backcompat": [
        "auth/2025-03-26-oauth-metadata-backcompat",
        "auth/2025-03-26-oauth-endpoint-fallback",
    ],
    "draft": [
        "auth/resource-mismatch",
        "auth/offline-access-scope",
        "auth/offline-access-not-supported",
    ],
    "extensions": [
        "auth/client-credentials-jwt",
        "auth/client-credentials-basic",
        "auth/cross-app-access-complete-flow",
    ],
}


def run(command: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **node_env()}
    return subprocess.run(
        command, capture_output=True, text=True, timeout=timeout, check=False, cwd=ROOT, env=env
    )


def results_of(results: Path, scenario: str) -> tuple[list[dict[str, str]], str]:
    (folder,) = results.glob(f"{scenario}-20*")
    stderr = folder / "stderr.txt"
    return json.loads((folder / "checks.json").read_text()), (
        stderr.read_text() if stderr.exists() else ""
    )


def assert_clean(results: Path, scenario: str, era: str | None) -> None:
    checks, stderr = results_of(results, scenario)
    bad = [c for c in checks if c["status"] in ("FAILURE", "WARNING")]
    assert not bad, f"{scenario}: {json.dumps(bad, indent=1)}\n{stderr}"
    assert any(c["status"] == "SUCCESS" for c in checks), scenario
    if scenario in REFUSING:
        assert "failed: " in stderr, f"{scenario} should have been refused:\n{stderr}"
    elif era is not None:
        assert era in stderr, f"{scenario}: {stderr}"


@pytest.mark.parametrize("revision", sorted(REQUIRED))
def test_every_required_auth_scenario_passes(revision: str, tmp_path: Path) -> None:
    scored = [s for s in scored_scenarios("client", revision) if s.startswith("auth/")]
    assert scored == REQUIRED[revision]
    command = [*conformance_next(), "client", "--command", CLIENT, "--requirements", revision]
    done = run([*command, "--timeout", "120000", "-o", str(tmp_path)], 600)
    for scenario in REQUIRED[revision]:
        assert_clean(tmp_path, scenario, ERA[revision])
    for scenario in EXTENSIONS:
        assert_clean(tmp_path, scenario, None)
    assert done.stdout, done.stderr


def test_every_listed_auth_scenario_is_looked_at() -> None:
    """Both suites' client listings: each auth scenario is run here."""
    env = {**os.environ, **node_env()}
    groups = (*REQUIRED.values(), *OLD_SUITES.values(), EXTENSIONS)
    known = {s for scenarios in groups for s in scenarios}
    for command in (
        [*conformance_next(), "list", "--client"],
        [*npm_command("conformance"), "list", "--client"],
    ):
        listing = subprocess.run(
            command, capture_output=True, text=True, timeout=60, check=True, env=env
        ).stdout
        names = {
            line.split()[1] for line in listing.splitlines() if line.strip().startswith("- auth/")
        }
        assert names, listing
        assert names <= known, names - known


@pytest.mark.parametrize("scenario", OLD_SUITES["backcompat"])
def test_backcompat_scenarios_of_the_new_suite_pass(scenario: str, tmp_path: Path) -> None:
    """2025-03-26 servers (no resource metadata): in no requirement set, run one by one."""
    command = [*conformance_next(), "client", "--command", CLIENT, "--scenario", scenario]
    run([*command, "-o", str(tmp_path)], 120)
    assert_clean(tmp_path, scenario, "era: handshake")


@pytest.mark.parametrize("suite", sorted(OLD_SUITES))
def test_released_suite_auth_scenarios_pass(suite: str, tmp_path: Path) -> None:
    command = [*npm_command("conformance"), "client", "--command", CLIENT, "--suite", suite]
    run([*command, "--timeout", "120000", "-o", str(tmp_path)], 600)
    for scenario in OLD_SUITES[suite]:
        assert_clean(tmp_path, scenario, None)
