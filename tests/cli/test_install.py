"""`mcpkit install CLIENT app.py`, run as a real subprocess against a temporary HOME: each
client's file, at the place and in the shape that client documents."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "tests" / "fixtures" / "cli_app.py")
RUN = [sys.executable, "-m", "mcpkit", "run", APP]


def install(home: Path, *args: str, path: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key not in ("XDG_CONFIG_HOME",)}
    env["HOME"] = str(home)
    if path is not None:
        env["PATH"] = path
    return subprocess.run(
        [sys.executable, "-m", "mcpkit", "install", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env,
    )


def read_json(path: Path) -> dict:
    return json.loads(path.read_text())


# client -> (file under HOME on Linux, key, whether entries carry "type": "stdio")
JSON_CLIENTS = {
    "claude-desktop": (".config/Claude/claude_desktop_config.json", "mcpServers", False),
    "claude-code": (".claude.json", "mcpServers", True),
    "cursor": (".cursor/mcp.json", "mcpServers", False),
    "vscode": (".config/Code/User/mcp.json", "servers", True),
    "gemini-cli": (".gemini/settings.json", "mcpServers", False),
}


@pytest.mark.parametrize("client", sorted(JSON_CLIENTS))
def test_each_json_client_gets_its_documented_file_and_key(tmp_path: Path, client: str) -> None:
    relative, key, typed = JSON_CLIENTS[client]
    done = install(tmp_path, client, APP, "--env", "API_KEY=k1")
    assert done.returncode == 0, done.stderr
    entry = read_json(tmp_path / relative)[key]["cli-app"]  # the Server's own name
    expected = {"command": RUN[0], "args": RUN[1:], "env": {"API_KEY": "k1"}}
    if typed:
        expected = {"type": "stdio", **expected}
    assert entry == expected
    assert Path(entry["command"]).is_absolute()


def test_an_existing_file_keeps_its_other_entries_and_settings_and_is_backed_up(
    tmp_path: Path,
) -> None:
    path = tmp_path / ".cursor" / "mcp.json"
    path.parent.mkdir()
    original = {"mcpServers": {"other": {"command": "npx", "args": ["x"]}}, "theme": "dark"}
    path.write_text(json.dumps(original))
    done = install(tmp_path, "cursor", APP, "--name", "mine")
    assert done.returncode == 0, done.stderr
    data = read_json(path)
    assert data["theme"] == "dark"
    assert data["mcpServers"]["other"] == original["mcpServers"]["other"]
    assert data["mcpServers"]["mine"]["args"] == RUN[1:]
    backups = list(path.parent.glob("mcp.json.*.bak"))
    assert len(backups) == 1 and json.loads(backups[0].read_text()) == original
    assert str(backups[0]) in done.stdout
    # Installing again under the same name replaces the entry, and keeps a second backup.
    again = install(tmp_path, "cursor", APP, "--name", "mine", "--env", "A=1")
    assert again.returncode == 0, again.stderr
    assert read_json(path)["mcpServers"]["mine"]["env"] == {"A": "1"}
    assert len(read_json(path)["mcpServers"]) == 2
    assert len(list(path.parent.glob("mcp.json.*.bak"))) == 2


def test_a_file_that_is_not_json_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / ".gemini" / "settings.json"
    path.parent.mkdir()
    path.write_text('{"mcpServers": {}, // a comment\n}')
    done = install(tmp_path, "gemini-cli", APP)
    assert done.returncode == 2
    assert "not plain JSON" in done.stderr
    assert path.read_text() == '{"mcpServers": {}, // a comment\n}'
    assert not list(path.parent.glob("*.bak"))


def test_dry_run_prints_the_new_file_and_writes_nothing(tmp_path: Path) -> None:
    done = install(tmp_path, "claude-desktop", APP, "--dry-run", "--name", "demo")
    assert done.returncode == 0, done.stderr
    header, _, body = done.stdout.partition("\n")
    assert header.endswith(".config/Claude/claude_desktop_config.json")
    assert json.loads(body)["mcpServers"]["demo"]["command"] == RUN[0]
    assert not (tmp_path / ".config").exists()


GOOSE_BEFORE = """\
# my settings
GOOSE_PROVIDER: anthropic
extensions:
  developer:
    enabled: true
    name: developer
    type: builtin
  cli-app:
    enabled: false
    name: old
    type: stdio
    cmd: old

GOOSE_MODEL: claude
"""


def test_goose_gets_an_extension_in_its_yaml_with_the_rest_kept(tmp_path: Path) -> None:
    path = tmp_path / ".config" / "goose" / "config.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(GOOSE_BEFORE)
    done = install(tmp_path, "goose", APP, "--env", 'QUOTE=a "b": c')
    assert done.returncode == 0, done.stderr
    text = path.read_text()
    data = yaml.safe_load(text)
    assert data["GOOSE_PROVIDER"] == "anthropic" and data["GOOSE_MODEL"] == "claude"
    assert data["extensions"]["developer"]["type"] == "builtin"
    assert data["extensions"]["cli-app"] == {
        "enabled": True,
        "name": "cli-app",
        "type": "stdio",
        "cmd": RUN[0],
        "args": RUN[1:],
        "envs": {"QUOTE": 'a "b": c'},
        "timeout": 300,
        "description": "cli-app (installed by mcpkit)",
    }
    assert text.startswith("# my settings\n") and "old" not in text


def test_goose_without_a_file_and_with_an_inline_mapping(tmp_path: Path) -> None:
    assert install(tmp_path, "goose", APP).returncode == 0
    path = tmp_path / ".config" / "goose" / "config.yaml"
    assert yaml.safe_load(path.read_text())["extensions"]["cli-app"]["cmd"] == RUN[0]
    path.write_text("extensions: {a: {cmd: x}}\n")
    refused = install(tmp_path, "goose", APP)
    assert refused.returncode == 2 and "inline" in refused.stderr
    assert path.read_text() == "extensions: {a: {cmd: x}}\n"


def test_mcp_json_and_stdio_print_instead_of_writing(tmp_path: Path) -> None:
    printed = install(tmp_path, "mcp-json", APP, "--name", "n", "--env", "K=V")
    assert json.loads(printed.stdout) == {
        "mcpServers": {"n": {"command": RUN[0], "args": RUN[1:], "env": {"K": "V"}}}
    }
    line = install(tmp_path, "stdio", APP)
    assert line.stdout.split() == RUN
    assert not any(tmp_path.iterdir())


def test_with_a_package_runs_through_uv_on_path(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    uv = bin_dir / "uv"
    uv.write_text("#!/bin/sh\n")
    uv.chmod(0o755)
    done = install(tmp_path, "mcp-json", APP, "--with", "numpy", path=str(bin_dir))
    assert done.returncode == 0, done.stderr
    entry = json.loads(done.stdout)["mcpServers"]["cli-app"]
    assert entry["command"] == str(uv)
    assert entry["args"] == [
        "run", "--with", "mcpkit", "--with", "numpy", "python", "-m", "mcpkit", "run", APP
    ]  # fmt: skip
    without_uv = install(tmp_path, "mcp-json", APP, "--with", "numpy", path=str(tmp_path))
    assert without_uv.returncode == 2 and "uv" in without_uv.stderr
    (tmp_path / "requirements.txt").write_text("numpy\n")
    everything = install(
        tmp_path, "mcp-json", APP, "--with-editable", str(tmp_path), "--with-requirements",
        str(tmp_path / "requirements.txt"), "--python", "3.12", "--project", str(tmp_path),
        path=str(bin_dir),
    )  # fmt: skip
    assert everything.returncode == 0, everything.stderr
    assert json.loads(everything.stdout)["mcpServers"]["cli-app"]["args"] == [
        "run", "--with", "mcpkit", "--with-editable", str(tmp_path), "--with-requirements",
        str(tmp_path / "requirements.txt"), "--python", "3.12", "--project", str(tmp_path),
        "python", "-m", "mcpkit", "run", APP,
    ]  # fmt: skip


def test_a_target_that_is_not_a_python_file_is_a_usage_error(tmp_path: Path) -> None:
    missing = install(tmp_path, "cursor", str(tmp_path / "nope.py"))
    assert missing.returncode == 2 and "no such file" in missing.stderr
    command = install(tmp_path, "cursor", "npx server")
    assert command.returncode == 2 and "not a Python file" in command.stderr


def discover(home: Path, cwd: Path) -> list[dict]:
    env = {key: value for key, value in os.environ.items() if key != "XDG_CONFIG_HOME"}
    env["HOME"] = str(home)
    done = subprocess.run(
        [sys.executable, "-m", "mcpkit", "discover", "--json"],
        capture_output=True, text=True, timeout=60, check=True, env=env, cwd=cwd,
    )  # fmt: skip
    rows: list[dict] = json.loads(done.stdout)
    return rows


@pytest.mark.timeout(180)  # several commands, each starting a server
def test_discover_finds_what_install_wrote_and_the_projects_files(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    (project / ".vscode").mkdir(parents=True)
    (project / ".vscode" / "mcp.json").write_text('{"servers": {"ws": {"command": "x"}}}')
    for client in ("cursor", "goose", "vscode"):
        assert install(home, client, APP, "--name", f"in-{client}").returncode == 0
    rows = {(row["source"], row["name"]): row for row in discover(home, project)}
    assert set(rows) == {
        ("cursor", "in-cursor"),
        ("vscode", "in-vscode"),
        ("goose", "in-goose"),
        ("vscode (workspace)", "ws"),
    }
    target = rows[("cursor", "in-cursor")]["target"]
    assert target == f"{home}/.cursor/mcp.json#in-cursor"
    listed = subprocess.run(
        [sys.executable, "-m", "mcpkit", "list", target, "--json"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert listed.returncode == 0, listed.stderr
    assert "add" in [tool["name"] for tool in json.loads(listed.stdout)["tools"]]


def test_permissions_are_kept_secrets_stay_private_and_symlinks_followed(tmp_path: Path) -> None:
    import stat

    def mode(path: Path) -> int:
        return stat.S_IMODE(path.stat().st_mode)

    # A new file may hold --env secrets: readable by its owner only.
    assert install(tmp_path, "gemini-cli", APP, "--env", "API_KEY=secret").returncode == 0
    assert mode(tmp_path / ".gemini" / "settings.json") == 0o600
    # A file that was there keeps its mode; its backup is private.
    claude = tmp_path / ".claude.json"
    claude.write_text('{"numStartups": 3}')
    claude.chmod(0o640)
    assert install(tmp_path, "claude-code", APP).returncode == 0
    assert mode(claude) == 0o640
    (backup,) = tmp_path.glob(".claude.json.*.bak")
    assert mode(backup) == 0o600
    # A symlinked configuration is changed where it lives, the link kept.
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    real = dotfiles / "mcp.json"
    real.write_text('{"mcpServers": {}}')
    (tmp_path / ".cursor").mkdir()
    (tmp_path / ".cursor" / "mcp.json").symlink_to(real)
    assert install(tmp_path, "cursor", APP).returncode == 0
    assert (tmp_path / ".cursor" / "mcp.json").is_symlink()
    assert "cli-app" in read_json(real)["mcpServers"]
