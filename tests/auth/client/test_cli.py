"""`mcpkit login`, `logout`, and the credentials of a URL target, as real subprocesses against
a protected server process (headless: its authorization server approves at once)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.test_cli import mcpkit as run_mcpkit

ROOT = Path(__file__).resolve().parents[3]
SERVERS = ROOT / "tests" / "auth" / "client" / "protected_process.py"


@pytest.fixture
def protected() -> Iterator[str]:
    process = subprocess.Popen(
        [sys.executable, str(SERVERS)], stdout=subprocess.PIPE, text=True, cwd=ROOT
    )
    try:
        assert process.stdout is not None
        url, _auth = process.stdout.readline().split()
        yield url
    finally:
        process.terminate()
        process.wait(10)
        if process.stdout is not None:
            process.stdout.close()


def mcpkit(config: Path, *args: str, token: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_CONFIG_HOME": str(config)}
    env.pop("MCPKIT_TOKEN", None)
    if token is not None:
        env["MCPKIT_TOKEN"] = token
    return run_mcpkit(*args, timeout=60, env=env)


def test_login_call_logout(protected: str, tmp_path: Path) -> None:
    login = mcpkit(tmp_path, "login", protected, "--headless")
    assert login.returncode == 0, login.stderr
    assert login.stdout.startswith(
        f"Logged in to {protected} (authorization server http://127.0.0.1:"
    )
    store = tmp_path / "mcpkit" / "oauth.json"
    assert stat.S_IMODE(store.stat().st_mode) == 0o600
    called = mcpkit(tmp_path, "call", protected, "add", "a=2", "b=40", "--no-login")
    assert (called.returncode, called.stdout) == (0, "42\n"), called.stderr
    logout = mcpkit(tmp_path, "logout", protected)
    assert logout.stdout == f"Logged out of {protected}\n"
    refused = mcpkit(tmp_path, "call", protected, "add", "a=2", "b=40", "--no-login")
    assert refused.returncode == 4
    assert "logging in is turned off (run `mcpkit login URL`)" in refused.stderr
    assert "Traceback" not in refused.stderr


def test_a_url_target_logs_in_when_the_server_asks(protected: str, tmp_path: Path) -> None:
    listed = mcpkit(tmp_path, "list", protected, "--headless", "--json")
    assert listed.returncode == 0, listed.stderr
    assert [t["name"] for t in json.loads(listed.stdout)["tools"]] == ["add", "write"]
    again = mcpkit(tmp_path, "call", protected, "add", "a=1", "b=1", "--no-login")
    assert again.stdout == "2\n"  # the stored login is reused


def test_a_bearer_token_from_the_option_or_the_environment(protected: str, tmp_path: Path) -> None:
    assert mcpkit(tmp_path, "login", protected, "--headless").returncode == 0
    record = json.loads((tmp_path / "mcpkit" / "oauth.json").read_text())
    token = record[protected]["tokens"]["access_token"]
    elsewhere = tmp_path / "empty"  # no stored login there
    by_option = mcpkit(
        elsewhere, "call", protected, "add", "a=1", "b=2", "--token", token, "--no-login"
    )
    by_variable = mcpkit(
        elsewhere, "call", protected, "add", "a=3", "b=4", "--no-login", token=token
    )
    assert (by_option.stdout, by_variable.stdout) == ("3\n", "7\n"), by_option.stderr
    wrong = mcpkit(elsewhere, "call", protected, "add", "a=1", "b=2", "--token", "nonsense")
    assert wrong.returncode != 0 and "401" in wrong.stderr


def test_a_token_for_a_command_target_is_a_usage_error(tmp_path: Path) -> None:
    done = mcpkit(tmp_path, "list", "python -c pass", "--token", "abc")
    assert done.returncode == 2
    assert "a command gets its credentials from its environment" in done.stderr


def test_a_url_where_nothing_listens_is_a_connection_failure(tmp_path: Path) -> None:
    """Nothing listening is not an authorization problem: the command says it could not
    connect (exit 3), not that OAuth discovery failed (exit 4)."""
    from tests.http.servers import unused_port

    url = f"http://127.0.0.1:{unused_port()}/mcp"
    listed = mcpkit(tmp_path, "list", url)
    assert listed.returncode == 3, listed.stderr
    assert f"connection failed: could not connect to {url}" in listed.stderr
    assert "OAuth" not in listed.stderr
    # An explicit login still names the step that failed.
    login = mcpkit(tmp_path, "login", url, "--headless")
    assert login.returncode == 4
    assert "discovery" in login.stderr
