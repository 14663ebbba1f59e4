"""`mcpkit list/call/read FILE` on Python files that hold no mcpkit server: the official SDK's
README server (no main guard), an official-SDK server that starts itself, a script with no
SDK at all, and an mcpkit server re-exported by a file that never imports mcpkit; each
through the real `mcpkit` command in a subprocess."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_cli import ROOT, mcpkit

FIXTURES = ROOT / "tests" / "fixtures"
QUICKSTART = str(FIXTURES / "sdk_quickstart_server.py")
# The official SDK takes about 2 s to import: in auto mode the era is decided by what the
# server answers, however late (issue 22 item 1), so these run in the default mode.


def test_the_official_sdk_readme_server_lists_calls_and_reads() -> None:
    listed = mcpkit("list", QUICKSTART, "--tools", "--templates", "--json")
    assert listed.returncode == 0, listed.stderr
    found = json.loads(listed.stdout)
    assert [tool["name"] for tool in found["tools"]] == ["add"]
    assert [t["uriTemplate"] for t in found["templates"]] == ["greeting://{name}"]
    called = mcpkit("call", QUICKSTART, "add", "a=1", "b=2")
    assert (called.returncode, called.stdout) == (0, "3\n")
    read = mcpkit("read", QUICKSTART, "greeting://Ada")
    assert (read.returncode, read.stdout) == (0, "Hello, Ada!\n")


def test_an_official_sdk_server_that_starts_itself_runs_as_python_file() -> None:
    server = str(FIXTURES / "official_server.py")
    listed = mcpkit("list", server, "--json")
    assert listed.returncode == 0, listed.stderr
    assert [tool["name"] for tool in json.loads(listed.stdout)["tools"]] == ["add", "echo"]
    assert mcpkit("call", server, "echo", "text=hi there").stdout == "hi there\n"


def test_a_stdio_script_without_any_sdk_runs_as_python_file() -> None:
    script = str(FIXTURES / "plain_stdio_server.py")
    listed = mcpkit("list", script)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.split()[0] == "shout"
    assert mcpkit("call", script, "shout", "text=hi").stdout == "HI!\n"


def test_an_mcpkit_server_imported_from_elsewhere_is_served(tmp_path: Path) -> None:
    (tmp_path / "reexport.py").write_text(
        f"import sys\nsys.path.insert(0, {str(FIXTURES)!r})\nfrom cli_app import app\n"
    )
    called = mcpkit("call", str(tmp_path / "reexport.py"), "add", "a=20", "b=22")
    assert (called.returncode, called.stdout) == (0, "42\n"), called.stderr


def test_a_file_that_neither_serves_nor_defines_a_server_says_so(tmp_path: Path) -> None:
    idle = tmp_path / "idle.py"
    idle.write_text("ANSWER = 42\n")
    out = mcpkit("list", str(idle))
    assert out.returncode == 3  # the server process ended: a connection failure
    assert "idle.py neither starts a server when run nor defines one named mcp" in out.stderr


def test_relative_paths_survive_a_different_working_directory(tmp_path: Path) -> None:
    relative = str(Path(QUICKSTART).relative_to(ROOT))
    called = mcpkit("call", relative, "add", "a=2", "b=3", "--cwd", str(tmp_path))
    assert (called.returncode, called.stdout) == (0, "5\n"), called.stderr
