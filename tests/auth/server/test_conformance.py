"""The official conformance suite (0.2.0, `conformance-next`) scores our authorization server:
every authorization-server scenario it lists, at every revision it lists them for, with no
failure and no warning. The server is the standalone runner (examples/authorization_server.py,
real uvicorn on 127.0.0.1) with one pre-registered public client and --dev-approve, so the
suite's authorization URL is approved at once: this test plays the browser, opening the URL
the suite prints and following the redirect to the suite's callback. The released suite
(0.1.16) has no authorization-server scenarios (its `list` names none).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.http.servers import unused_port, wait_until_listening
from tests.peers import conformance_next, node_env, npm_command

ROOT = Path(__file__).resolve().parents[3]
SCENARIOS = {"authorization-server-metadata-endpoint", "authorization-code-grant"}
REVISIONS = ["2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]
CLIENT = "conformance-client"


def listed_scenarios() -> dict[str, list[str]]:
    """Authorization-server scenario -> the revisions the suite lists it for."""
    command = [*conformance_next(), "list", "--authorization"]
    env = {**os.environ, **node_env()}
    listing = subprocess.run(
        command, capture_output=True, text=True, timeout=60, check=True, env=env
    ).stdout
    found = re.findall(r"^\s+- ([\w-]+) \[([\w,-]+)\]$", listing, flags=re.MULTILINE)
    return {name: revisions.split(",") for name, revisions in found}


@pytest.fixture(scope="module")
def issuer() -> Iterator[str]:
    port = unused_port()
    runner = ROOT / "examples" / "authorization_server.py"
    command = [sys.executable, str(runner), "--port", str(port), "--memory", "--dev-approve"]
    command += ["--client", f"{CLIENT}=http://127.0.0.1/callback", "--scope", "mcp"]
    process = subprocess.Popen(command, cwd=ROOT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_listening(url)
        yield url
    finally:
        process.terminate()
        process.wait(10)


def test_the_suite_lists_the_scenarios_we_pass() -> None:
    listed = listed_scenarios()
    assert set(listed) == SCENARIOS, listed  # a new scenario fails here until looked at
    assert sorted({revision for found in listed.values() for revision in found}) == REVISIONS
    released = subprocess.run(
        [*npm_command("conformance"), "list"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env={**os.environ, **node_env()},
    ).stdout
    assert "Authorization server scenarios" not in released
    assert not any(name in released for name in SCENARIOS)


@pytest.mark.parametrize("revision", REVISIONS)
def test_every_authorization_server_scenario_passes(
    issuer: str, revision: str, tmp_path: Path
) -> None:
    listed = listed_scenarios()
    expected = sorted(name for name, revs in listed.items() if revision in revs)
    assert expected == sorted(SCENARIOS)
    callback_port = unused_port()
    command = [*conformance_next(), "authorization", "--url", issuer, "--client-id", CLIENT]
    command += ["-p", str(callback_port), "--spec-version", revision, "-o", str(tmp_path)]
    if revision != "2025-03-26":  # clients send the resource indicator since 2025-06-18
        command += ["--resource", "http://127.0.0.1:8000/mcp"]
    report = run_suite_as_the_browser(command)
    checks = {
        re.sub(r"^authorization-server-|-\d{4}-\d\d-\d\dT.*$", "", folder.name): json.loads(
            (folder / "checks.json").read_text()
        )
        for folder in tmp_path.iterdir()
        if (folder / "checks.json").exists()
    }
    assert sorted(checks) == expected, report
    bad = [c for found in checks.values() for c in found if c["status"] in ("FAILURE", "WARNING")]
    assert not bad, json.dumps(bad, indent=1)
    for scenario, found in checks.items():
        assert found and all(c["status"] == "SUCCESS" for c in found), (scenario, found)
    assert re.search(r"Total: \d+ passed, 0 failed", report), report


def run_suite_as_the_browser(command: list[str]) -> str:
    """Run the suite; when it prints the authorization URL, open it (following redirects to
    the suite's callback, as a browser would). Returns everything the suite printed."""
    env = {**os.environ, **node_env()}
    lines: list[str] = []
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT, env=env
    ) as process:
        assert process.stdout is not None
        try:
            waiting_for_url = False
            for line in process.stdout:
                lines.append(line)
                if "Access the following URL" in line:
                    waiting_for_url = True
                elif waiting_for_url and line.startswith("http"):
                    waiting_for_url = False
                    landed = httpx.get(line.strip(), follow_redirects=True, timeout=10)
                    assert landed.status_code == 200, landed.text
                    assert landed.url.path == "/callback"
            process.wait(60)
        finally:
            if process.poll() is None:
                process.kill()
    report = "".join(lines)
    assert process.returncode == 0, report
    return report
