"""`mcpkit inspect`: the web inspector started by the command, `--json` reports, `--diff`
and `--replay` with their exit codes; every case runs the real command in a subprocess."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.inspector_process import running

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "tests" / "fixtures" / "cli_app.py"


def mcpkit(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcpkit", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
    )


def app_copy(folder: Path) -> Path:
    copy = folder / "app.py"
    shutil.copy(APP, copy)
    return copy


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def test_json_report_holds_info_capabilities_and_every_item_with_schemas(tmp_path: Path) -> None:
    app_copy(tmp_path)
    done = mcpkit("inspect", "app.py", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["server"]["info"]["name"] == "cli-app"
    assert "tools" in report["server"]["capabilities"]
    assert report["server"]["protocolVersion"]
    tools = {tool["name"]: tool for tool in report["tools"]}
    assert sorted(tools) == ["add", "describe", "fail", "slow"]
    assert tools["add"]["inputSchema"]["required"] == ["a", "b"]
    assert [prompt["name"] for prompt in report["prompts"]] == ["review"]
    assert report["resources"] == [] and report["resourceTemplates"] == []


@pytest.mark.timeout(180)  # several commands, each starting a server
def test_diff_exit_code_is_1_only_when_something_was_removed_or_changed(tmp_path: Path) -> None:
    app = app_copy(tmp_path)
    old = tmp_path / "old.json"
    old.write_text(mcpkit("inspect", "app.py", "--json", cwd=tmp_path).stdout)
    same = mcpkit("inspect", "app.py", "--diff", "old.json", cwd=tmp_path)
    assert (same.returncode, same.stdout) == (0, "no differences\n"), same.stderr
    # Only added: a new tool is no break.
    app.write_text(app.read_text() + '\n\n@app.tool()\ndef extra() -> str:\n    return "x"\n')
    added = mcpkit("inspect", "app.py", "--diff", "old.json", cwd=tmp_path)
    assert (added.returncode, added.stdout) == (0, "+ tool extra\n"), added.stderr
    # Changed: a description; removed: a tool.
    edit(app, '"""Add two integers."""', '"""Add two whole numbers."""')
    edit(app, "def fail(", "def _fail_gone(")
    edit(app, "@app.tool()\ndef _fail_gone(", "def _fail_gone(")
    broken = mcpkit("inspect", "app.py", "--diff", "old.json", "--json", cwd=tmp_path)
    assert broken.returncode == 1, broken.stderr
    changes = json.loads(broken.stdout)
    assert changes["removed"] == [{"kind": "tool", "key": "fail"}]
    assert changes["changed"] == [{"kind": "tool", "key": "add", "fields": ["description"]}]
    assert changes["added"] == [{"kind": "tool", "key": "extra"}]


@pytest.mark.timeout(180)  # several commands, each starting a server
def test_diff_of_two_live_servers(tmp_path: Path) -> None:
    app_copy(tmp_path)
    other = tmp_path / "other.py"
    other.write_text(
        "from mcpkit import Server\napp = Server('other')\n\n"
        "@app.tool()\ndef add(a: int, b: int) -> int:\n    return a + b\n"
    )
    done = mcpkit("inspect", "other.py", "--diff", "app.py", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert "- tool fail" in lines and "- prompt review" in lines
    assert "- capability prompts" in lines
    assert "  note: server name: cli-app -> other" in lines


def test_json_diff_and_replay_need_a_target_and_a_report(tmp_path: Path) -> None:
    no_target = mcpkit("inspect", "--json", cwd=tmp_path)
    assert no_target.returncode == 2 and "need a TARGET" in no_target.stderr
    app_copy(tmp_path)
    (tmp_path / "bad.json").write_text('{"tools": []}')
    bad = mcpkit("inspect", "app.py", "--diff", "bad.json", cwd=tmp_path)
    assert bad.returncode == 2 and "not a report" in bad.stderr


@pytest.mark.timeout(180)  # several commands, each starting a server
def test_a_recorded_inspector_session_replays_and_differences_fail(tmp_path: Path) -> None:
    app = app_copy(tmp_path)
    recording = tmp_path / "session.jsonl"
    with running(
        "inspect", "app.py", "--no-browser", "--record", str(recording), cwd=tmp_path
    ) as inspector:
        state = inspector.wait_for_state(lambda state: state["connected"])
        assert state["server"]["info"]["name"] == "cli-app"
        called = inspector.request("tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}})
        assert called["result"]["content"][0]["text"] == "5"
        assert "error" in inspector.request("tools/call", {"name": "nope", "arguments": {}})
        assert inspector.request("prompts/list")["result"]["prompts"][0]["name"] == "review"
    lines = [json.loads(line) for line in recording.read_text().splitlines()]
    assert lines[0]["dir"] == "meta" and lines[0]["target"] == "app.py"

    same = mcpkit("inspect", "app.py", "--replay", str(recording), cwd=tmp_path)
    assert same.returncode == 0, same.stdout + same.stderr
    assert "3 requests replayed, 0 answered differently" in same.stdout

    edit(app, "return a + b", "return a + b + 1")
    changed = mcpkit("inspect", "app.py", "--replay", str(recording), "--json", cwd=tmp_path)
    assert changed.returncode == 1, changed.stderr
    summary = json.loads(changed.stdout)
    assert [d["method"] for d in summary["different"]] == ["tools/call"]
    assert summary["different"][0]["now"]["result"]["content"][0]["text"] == "6"


def test_the_web_inspector_refuses_a_request_without_its_token(tmp_path: Path) -> None:
    app_copy(tmp_path)
    with running("inspect", "app.py", "--no-browser", cwd=tmp_path) as inspector:
        import httpx

        assert httpx.get(inspector.base + "/api/state").status_code == 403
        state = inspector.wait_for_state(lambda state: state["connected"])
        assert state["target"] == "app.py"


def test_a_port_in_use_is_a_usage_error(tmp_path: Path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = mcpkit("inspect", "--no-browser", "--port", str(port), cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr
