"""`mcpkit dev app.py`: the server under the inspector, started again when the file changes;
the real command in a subprocess, a real file edited."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.inspector_process import running

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "tests" / "fixtures" / "cli_app.py"
BLOCKER = Path(__file__).parent / "blocked"

NEW_TOOL = (
    '\n\n@app.tool()\ndef fresh() -> str:\n    """Added while running."""\n    return "new"\n'
)


def tool_names(inspector) -> list[str]:  # type: ignore[no-untyped-def]
    answer = inspector.request("tools/list")
    return [tool["name"] for tool in answer["result"]["tools"]]


@pytest.mark.timeout(180)  # several commands, each starting a server
def test_an_edited_file_is_served_again_and_the_inspector_follows(tmp_path: Path) -> None:
    app = tmp_path / "app.py"
    shutil.copy(APP, app)
    with running("dev", "app.py", "--no-browser", cwd=tmp_path) as inspector:
        inspector.line("mcpkit dev: connected to app.py")
        assert "fresh" not in tool_names(inspector)
        app.write_text(app.read_text() + NEW_TOOL)
        assert "app.py" in inspector.line("mcpkit dev: changed:")
        inspector.line("mcpkit dev: reconnected to app.py")
        assert "fresh" in tool_names(inspector)
        called = inspector.request("tools/call", {"name": "fresh", "arguments": {}})
        assert called["result"]["content"][0]["text"] == "new"
        # A file that does not start is reported, and the next good save recovers.
        app.write_text(app.read_text() + "\nthis is not python\n")
        inspector.line("mcpkit dev: app.py did not start")
        app.write_text(app.read_text().replace("\nthis is not python\n", "\n"))
        inspector.line("mcpkit dev: reconnected to app.py")
        assert "fresh" in tool_names(inspector)


def test_without_watchfiles_the_error_names_the_extra(tmp_path: Path) -> None:
    shutil.copy(APP, tmp_path / "app.py")
    env = {**os.environ, "PYTHONPATH": str(BLOCKER), "MCPKIT_TEST_BLOCK": "watchfiles"}
    done = subprocess.run(
        [sys.executable, "-m", "mcpkit", "dev", "app.py", "--no-browser"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2, done.stderr
    assert "mcpkit[watch]" in done.stderr


def test_a_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mcpkit", "dev", "nope.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2 and "no such file" in done.stderr


@pytest.mark.timeout(180)  # several commands, each starting a server
def test_without_the_inspector_the_http_server_is_restarted_on_change(tmp_path: Path) -> None:
    from tests.http.servers import unused_port

    app = tmp_path / "app.py"
    shutil.copy(APP, app)
    port = unused_port()
    url = f"http://127.0.0.1:{port}/mcp"
    argv = [sys.executable, "-m", "mcpkit", "dev", "app.py", "--no-inspector"]
    process = subprocess.Popen(
        [*argv, "--server-port", str(port)],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    try:
        assert process.stdout.readline() == f"mcpkit dev: serving app.py on {url}\n"
        assert "fresh" not in listed(url)
        app.write_text(app.read_text() + NEW_TOOL)
        assert "app.py; restarting" in process.stdout.readline()
        assert process.stdout.readline() == "mcpkit dev: serving app.py again\n"
        assert "fresh" in listed(url)
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=60)
        process.stdout.close()


def listed(url: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-m", "mcpkit", "list", url, "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return [tool["name"] for tool in json.loads(done.stdout)["tools"]]
