"""The `mcpkit` command, run as a real subprocess against real servers."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "tests" / "fixtures" / "cli_app.py")


def mcpkit(
    *args: str,
    timeout: float = 30,
    cwd: Path = ROOT,
    env: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """The `mcpkit` command as a real subprocess (`env`: the whole environment to give it)."""
    return subprocess.run(
        [sys.executable, "-m", "mcpkit", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        cwd=cwd,
        env=None if env is None else dict(env),
    )


def test_list_shows_tools_for_people_and_json_for_scripts() -> None:
    human = mcpkit("list", APP)
    assert human.returncode == 0, human.stderr
    lines = human.stdout.splitlines()
    assert [line.split()[0] for line in lines] == ["add", "describe", "fail", "slow"]
    assert "Add two integers." in lines[0]
    machine = mcpkit("list", APP, "--tools", "--prompts", "--json")
    data = json.loads(machine.stdout)
    assert [tool["name"] for tool in data["tools"]] == ["add", "describe", "fail", "slow"]
    assert data["prompts"][0]["name"] == "review"


def test_call_parses_values_as_json_where_they_parse() -> None:
    assert mcpkit("call", APP, "add", "a=2", "b=40").stdout == "42\n"
    kinds = {
        "n=3": "int",
        "n=3.5": "float",
        "n=true": "bool",
        "n=hello": "str",
        'n=["x"]': "list",
        'n={"k":1}': "dict",
        'n="3"': "str",
    }
    for argument, kind in kinds.items():
        out = mcpkit("call", APP, "describe", argument.replace("n=", "value="))
        assert out.stdout.strip() == kind, argument


def test_call_with_exact_json_arguments_and_json_output() -> None:
    out = mcpkit("call", APP, "add", "--args", '{"a": 1, "b": 2}', "--json")
    assert out.returncode == 0
    result = json.loads(out.stdout)
    assert result["content"] == [{"type": "text", "text": "3"}] and result["isError"] is False


def test_exit_codes_tell_failures_apart() -> None:
    tool_error = mcpkit("call", APP, "fail", "reason=broken")
    assert tool_error.returncode == 1 and "broken" in tool_error.stdout
    protocol = mcpkit("call", APP, "missing")
    assert protocol.returncode == 4
    assert protocol.stderr.strip() == (
        "mcpkit: the server answered with an error: Unknown tool: missing (code -32602)"
    )
    usage = mcpkit("call", APP, "add", "not-a-pair")
    assert usage.returncode == 2 and "key=value" in usage.stderr
    assert mcpkit("call", APP, "add", "--args", "[1]").returncode == 2
    assert mcpkit("list", "no_such_file.py").returncode == 2
    connection = mcpkit("list", f"{sys.executable} -c 'import sys; sys.exit(7)'")
    assert connection.returncode == 3
    missing = mcpkit("list", "no-such-mcp-server --stdio")
    assert missing.returncode == 3 and "Traceback" not in missing.stderr
    assert missing.stderr.strip() == (
        "mcpkit: connection failed: could not start the server 'no-such-mcp-server --stdio': "
        "'no-such-mcp-server' was not found"
    )
    assert "exited with code 7" in connection.stderr
    assert "Traceback" not in connection.stderr


def test_debug_shows_the_traceback() -> None:
    out = mcpkit("--debug", "call", APP, "missing")
    assert out.returncode == 4 and "Traceback" in out.stderr


def test_progress_bar_stays_off_a_pipe_and_the_result_prints() -> None:
    out = mcpkit("call", APP, "slow", "steps=5")
    assert out.returncode == 0
    assert out.stdout == "finished\n" and "[" not in out.stderr


def test_prompt_renders_messages() -> None:
    out = mcpkit("prompt", APP, "review", "code=x = 1")
    assert out.returncode == 0
    assert out.stdout.splitlines() == ["[user]", "Please review: x = 1"]


def test_run_needs_one_server_or_a_name(tmp_path: Path) -> None:
    two = tmp_path / "two.py"
    two.write_text("from mcpkit import Server\na = Server('a')\nb = Server('b')\n")
    out = mcpkit("run", str(two))
    assert out.returncode == 2 and "2 Servers" in out.stderr and f"{two}:NAME" in out.stderr
    named = mcpkit("list", f"{APP}:app")
    assert named.returncode == 0 and "add" in named.stdout
    wrong = mcpkit("list", f"{APP}:nothing")
    assert wrong.returncode == 3  # the served subprocess refused, so the connection failed


def test_target_can_be_a_command_line() -> None:
    target = f"{sys.executable} {ROOT / 'examples' / 'demo_server.py'}"
    listed = mcpkit("list", target)
    assert listed.returncode == 0 and "greet" in listed.stdout
    called = mcpkit("call", target, "greet", "name=Ada")
    assert called.returncode == 0 and called.stdout == "Hello, Ada!\n"


def test_run_serves_http_and_the_cli_talks_to_the_url() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    serving = subprocess.Popen(
        [sys.executable, "-m", "mcpkit", "run", APP, "--transport", "http", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=ROOT,
    )
    try:
        deadline = time.monotonic() + 15
        while True:  # wait until uvicorn accepts connections
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the HTTP server did not start"
                time.sleep(0.05)
        url = f"http://127.0.0.1:{port}/mcp"
        assert mcpkit("call", url, "add", "a=20", "b=22").stdout == "42\n"
        listed = mcpkit("list", url, "--prompts")
        assert listed.returncode == 0 and "review" in listed.stdout
    finally:
        serving.terminate()
        serving.wait(10)


def test_a_reader_that_stops_early_ends_the_command_quietly() -> None:
    # `mcpkit list APP | head -1`: the pipe closes under the command's output
    process = subprocess.Popen(
        [sys.executable, "-m", "mcpkit", "list", APP, "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # gone before the command has written anything
    process.wait(30)
    with process.stderr:
        assert process.stderr.read() == b""  # no "connection failed", no traceback
    assert process.returncode == 141


def test_run_on_a_port_in_use_says_so() -> None:
    """A port another process listens on: one line naming address and cause (exit 2), not
    uvicorn's log line."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = mcpkit("run", APP, "--transport", "http", "--port", str(port))
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == (
        f"mcpkit: error: cannot listen on 127.0.0.1:{port}: Address already in use"
    )
