"""`--header "Name: value"` on the commands that talk to a URL (as the MCP Inspector's CLI
mode has): real subprocesses against a protected server process."""

from __future__ import annotations

import json
from pathlib import Path

from tests.auth.client.test_cli import mcpkit, protected

__all__ = ["protected"]  # the fixture, used by name below


def test_an_authorization_header_is_the_credentials(protected: str, tmp_path: Path) -> None:
    assert mcpkit(tmp_path, "login", protected, "--headless").returncode == 0
    record = json.loads((tmp_path / "mcpkit" / "oauth.json").read_text())
    token = record[protected]["tokens"]["access_token"]
    elsewhere = tmp_path / "empty"  # no stored login there
    called = mcpkit(
        elsewhere, "call", protected, "add", "a=1", "b=2",
        "--header", f"Authorization: Bearer {token}", "--header", "X-Trace: 7", "--no-login",
    )  # fmt: skip
    assert (called.returncode, called.stdout) == (0, "3\n"), called.stderr
    # Another header alone is no credential: without a login the server refuses.
    other = mcpkit(elsewhere, "list", protected, "--header", "X-Trace: 7", "--no-login")
    assert other.returncode == 4 and "logging in is turned off" in other.stderr


def test_a_malformed_header_and_a_header_for_a_command_are_usage_errors(tmp_path: Path) -> None:
    bad = mcpkit(tmp_path, "list", "http://127.0.0.1:1/mcp", "--header", "no colon")
    assert bad.returncode == 2 and "--header expects 'Name: value'" in bad.stderr
    command = mcpkit(tmp_path, "list", "python -c pass", "--header", "A: b")
    assert command.returncode == 2 and "--token and --header are for URL targets" in command.stderr
