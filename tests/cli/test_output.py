"""Output for people and for scripts: a table on a terminal (a real pseudo-terminal), plain
lines through a pipe, --version, and the completion scripts; the real command each time."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SERVER = '''\
from mcpkit import Server

app = Server("hyphens")


@app.tool(name="read-text-file-contents")
def read_text() -> str:
    """Read the complete contents of a text file from the file system as text, with its
    encoding guessed, for files of any size that the server's allowed directories hold."""
    return ""


@app.tool(name="w")
def w() -> str:
    """Write a file."""
    return ""
'''


def mcpkit(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcpkit", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
    )


def on_a_terminal(*args: str, cwd: Path, columns: int) -> str:
    """What the command shows on a terminal `columns` wide (a pseudo-terminal)."""
    leader, follower = os.openpty()
    env = {**os.environ, "COLUMNS": str(columns)}
    process = subprocess.Popen(
        [sys.executable, "-m", "mcpkit", *args],
        cwd=cwd,
        env=env,
        stdout=follower,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the terminal's other side closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert process.wait(timeout=60) == 0
    return b"".join(chunks).decode().replace("\r\n", "\n")


def test_a_table_on_a_terminal_and_plain_lines_through_a_pipe(tmp_path: Path) -> None:
    (tmp_path / "server.py").write_text(SERVER)
    shown = on_a_terminal("list", "server.py", cwd=tmp_path, columns=60)
    lines = shown.splitlines()
    assert lines[0].startswith("read-text-file-contents  Read the complete")
    indent = len("read-text-file-contents  ")
    assert all(line.startswith(" " * indent) for line in lines[1:-1])  # wrapped, aligned
    assert all(len(line) <= 60 for line in lines)
    assert lines[-1] == "w" + " " * (indent - 1) + "Write a file."
    piped = mcpkit("list", "server.py", cwd=tmp_path)
    assert piped.returncode == 0, piped.stderr
    rows = [line.split("\t") for line in piped.stdout.splitlines()]
    assert [row[0] for row in rows] == ["read-text-file-contents", "w"]
    assert rows[0][1].startswith("Read the complete contents") and rows[0][1].endswith("hold.")
    assert rows[1] == ["w", "Write a file."]


def test_version_names_the_package_and_the_protocol_revisions() -> None:
    from mcpkit._version import __version__
    from mcpkit.types.versions import SUPPORTED_VERSIONS

    done = mcpkit("--version")
    assert done.returncode == 0
    first, second = done.stdout.splitlines()
    assert first == f"mcpkit {__version__}"
    assert all(version in second for version in SUPPORTED_VERSIONS)


def test_every_command_has_help() -> None:
    top = mcpkit("--help").stdout
    assert "Exit codes: 0 success" in top  # the whole story, not only the first line
    assert "mcpkit install CLIENT app.py" in top
    for command in ("inspect", "dev", "install", "completion", "list", "call", "servers"):
        assert command in top
        assert mcpkit(command, "--help").returncode == 0


def test_bash_completion_completes_commands_and_each_commands_options() -> None:
    script = mcpkit("completion", "bash").stdout

    def complete(*words: str) -> list[str]:
        line = " ".join(["mcpkit", *words])
        program = (
            f"{script}\nCOMP_WORDS=(mcpkit {' '.join(words)}); COMP_CWORD={len(words)};"
            f' COMP_LINE="{line}"; _mcpkit; printf "%s\\n" "${{COMPREPLY[@]}}"'
        )
        done = subprocess.run(["bash", "-c", program], capture_output=True, text=True, check=True)
        return done.stdout.split()

    assert complete("ins") == ["inspect", "install"]
    assert "--dry-run" in complete("install", "--")
    assert complete("inspect", "app.py", "--re") == ["--record", "--replay"]


def test_fish_completion_is_valid_fish() -> None:
    script = mcpkit("completion", "fish").stdout
    subprocess.run(["fish", "--no-execute", "-c", script], check=True)


def test_zsh_and_fish_scripts_name_every_command() -> None:
    zsh = mcpkit("completion", "zsh").stdout
    assert zsh.startswith("autoload -U +X bashcompinit && bashcompinit\n")
    fish = mcpkit("completion", "fish").stdout
    for command in ("inspect", "dev", "install"):
        assert f"__fish_seen_subcommand_from {command}" in fish
    assert json.loads(mcpkit("install", "mcp-json", str(ROOT / "tests/fixtures/cli_app.py")).stdout)


def test_a_server_of_a_configuration_file_as_target(tmp_path: Path) -> None:
    app = str(ROOT / "tests" / "fixtures" / "cli_app.py")
    config = {
        "mcpServers": {
            "calc": {"command": sys.executable, "args": ["-m", "mcpkit", "run", app]},
            "other": {"command": "true"},
        }
    }
    (tmp_path / "mcp.json").write_text(json.dumps(config))
    called = mcpkit("call", "mcp.json#calc", "add", "a=1", "b=2", cwd=tmp_path)
    assert (called.returncode, called.stdout) == (0, "3\n"), called.stderr
    report = mcpkit("inspect", "mcp.json#calc", "--json", cwd=tmp_path)
    assert json.loads(report.stdout)["server"]["info"]["name"] == "cli-app"
    missing = mcpkit("list", "mcp.json#nope", cwd=tmp_path)
    assert missing.returncode == 2
    assert "no server 'nope' in mcp.json (servers: calc, other)" in missing.stderr


def test_list_shows_the_schemas_when_asked() -> None:
    app = str(ROOT / "tests" / "fixtures" / "cli_app.py")
    plain = mcpkit("list", app).stdout
    assert "inputSchema" not in plain
    rows = dict(
        line.split("\t") for line in mcpkit("list", app, "--input-schema").stdout.splitlines()
    )
    schema = json.loads(rows["add"].split(" inputSchema: ", 1)[1])
    assert schema["required"] == ["a", "b"] and "outputSchema" not in rows["add"]
    both = mcpkit("list", app, "--input-schema", "--output-schema").stdout
    assert "outputSchema" in both


def test_schemas_on_a_terminal_are_indented_json_under_each_tool(tmp_path: Path) -> None:
    app = str(ROOT / "tests" / "fixtures" / "cli_app.py")
    shown = on_a_terminal("list", app, "--input-schema", cwd=tmp_path, columns=60)
    assert all(len(line) <= 60 for line in shown.splitlines())  # nothing past the edge
    block = shown.split("add  Add two integers.\n  inputSchema:\n", 1)[1].split("\ndescribe")[0]
    assert json.loads(block)["required"] == ["a", "b"]


def test_a_task_id_that_starts_with_a_dash_is_still_the_id(tmp_path: Path) -> None:
    """token_urlsafe ids start with "-" one time in 32; argparse took them for options
    (`the following arguments are required: ID`, a flaky tests/cli/test_cli_tasks.py)."""
    app = str(ROOT / "tests" / "fixtures" / "cli_app.py")
    done = mcpkit("task", "get", app, "-Zx9_q", "--mode", "2026-07-28")
    # The request was sent (this server has no tasks at all), not refused by the parser.
    assert done.returncode == 4 and "tasks/get" in done.stderr, done.stderr
    missing = mcpkit("task", "get", app)
    assert missing.returncode == 2 and "needs one ID" in missing.stderr
    extra = mcpkit("list", app, "--bogus")
    assert extra.returncode == 2 and "unrecognized arguments: --bogus" in extra.stderr
