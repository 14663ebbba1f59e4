"""A hostile server's text through the real `mcpkit` command: every escape sequence, C1 control
and bidi override it sends shows visibly and drives nothing (tests/fixtures/hostile_server.py,
a real subprocess); `--json` stays exact JSON."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import sys
from pathlib import Path

from mcpkit.host.visible import json_text, one_line, visible
from tests.cli.test_cli import mcpkit
from tests.cli.tmux import TITLE, Tmux
from tests.fixtures.hostile_server import EVIL

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = str(ROOT / "tests" / "fixtures" / "hostile_server.py")
# EVIL as it must show: every character a terminal would obey written out.
SHOWN = "^[]0;PWNED-TITLE^G^[[2J^[[H^[]52;c;UFdORUQ=^G<U+009B>31mforged<U+202E>txet"
# What must never reach the terminal: C0 but newline and tab, DEL, C1, the bidi controls.
OBEYED = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def shown_safely(text: str) -> bool:
    return SHOWN in text and not OBEYED.search(text)


def test_visible_writes_out_what_a_terminal_obeys() -> None:
    assert visible(EVIL) == SHOWN
    assert visible("a\r\nb\tc\rd\x00\x7f\u2066\u2028\ud800") == (
        "a^M^Jb^Ic^Md^@^?<U+2066><U+2028><U+D800>"
    )
    assert visible("a\r\nb\tc\rd", lines=True) == "a\nb\tc^Md"  # a lone CR would overwrite
    assert visible("ünïcödé ✓ 👩‍💻") == "ünïcödé ✓ 👩‍💻"  # letters and ZWJ emoji as they are
    assert visible(visible(EVIL)) == visible(EVIL)
    assert one_line(f"a\n\n{EVIL}", limit=12) == "a ^[]0;PWNE…"
    encoded = json_text(json.dumps(EVIL, ensure_ascii=False))
    assert json.loads(encoded) == EVIL and not OBEYED.search(encoded)


def test_list_shows_names_and_descriptions_visibly_and_json_exactly() -> None:
    done = mcpkit("list", HOSTILE, "--tools", "--resources", "--prompts")
    assert done.returncode == 0, done.stderr
    assert shown_safely(done.stdout), done.stdout
    assert f"evil{SHOWN}\ta tool {SHOWN}" in done.stdout.splitlines()
    exact = mcpkit("list", HOSTILE, "--tools", "--resources", "--prompts", "--json")
    assert not OBEYED.search(exact.stdout)
    data = json.loads(exact.stdout)
    assert data["tools"][0] == {
        "name": f"evil{EVIL}",
        "description": f"a tool {EVIL}",
        "inputSchema": {"type": "object"},
    }
    assert data["prompts"][0]["description"] == f"a prompt {EVIL}"


def test_call_shows_the_result_and_the_log_line_visibly() -> None:
    done = mcpkit("call", HOSTILE, "echo", "--log-level", "debug")
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"result\t1\n{SHOWN}\n"  # its newline and tab kept
    assert done.stderr == f"[warning] log{SHOWN}: logged {SHOWN}\n"
    exact = mcpkit("call", HOSTILE, "echo", "--json")
    assert not OBEYED.search(exact.stdout)
    assert json.loads(exact.stdout)["content"][0]["text"] == f"result\t1\n{EVIL}"


def test_a_servers_error_message_shows_visibly() -> None:
    done = mcpkit("call", HOSTILE, "missing")
    assert done.returncode == 4
    assert done.stderr == (
        f"mcpkit: the server answered with an error: refused {SHOWN} (code -32602)\n"
    )


def test_read_and_prompt_show_the_text_visibly() -> None:
    read = mcpkit("read", HOSTILE, "file:///evil.txt")
    assert read.stdout == f"line 1\n{SHOWN}\n", read.stderr
    exact = mcpkit("read", HOSTILE, "file:///evil.txt", "--json")
    assert json.loads(exact.stdout)["contents"][0]["text"] == f"line 1\n{EVIL}"
    prompt = mcpkit("prompt", HOSTILE, "greet")
    assert prompt.stdout == f"[user]\nhi {SHOWN}\n", prompt.stderr
    exact = mcpkit("prompt", HOSTILE, "greet", "--json")
    assert json.loads(exact.stdout)["messages"][0]["content"]["text"] == f"hi {EVIL}"
    assert not OBEYED.search(exact.stdout)


def hostile_config(tmp_path: Path) -> Path:
    """mcp.json: the hostile server; one that dies with escapes on its stderr; one that needs
    an answer to the configuration's `inputs`."""
    dying = "import sys; sys.stderr.write('dying \\x1b]0;PWNED-TITLE\\x07\\n'); sys.exit(3)"
    config = {
        "inputs": [{"type": "promptString", "id": "key", "description": "Your key"}],
        "mcpServers": {
            "hostile": {"command": sys.executable, "args": [HOSTILE]},
            "dying": {"command": sys.executable, "args": ["-c", dying]},
            "keyed": {"command": sys.executable, "args": [HOSTILE], "env": {"K": "${input:key}"}},
        },
    }
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps(config))
    return path


def test_servers_shows_tool_names_and_failures_visibly(tmp_path: Path) -> None:
    config = str(hostile_config(tmp_path))
    done = mcpkit("servers", "--config", config)
    assert done.returncode == 0, done.stderr
    rows = dict(line.split("\t") for line in done.stdout.splitlines())
    assert rows["hostile"] == f"ready: evil{SHOWN}, echo"
    assert rows["dying"].endswith("its stderr ended with: dying ^[]0;PWNED-TITLE^G")
    exact = mcpkit("servers", "--config", config, "--json")
    assert not OBEYED.search(exact.stdout)
    assert json.loads(exact.stdout)[0]["tools"] == [f"evil{EVIL}", "echo"]


def test_a_log_line_quoting_a_server_shows_it_visibly(tmp_path: Path) -> None:
    """The host's warning (logging's last-resort handler) quotes the server's error."""
    refusing = {"command": sys.executable, "args": [HOSTILE, "--refuse-lists"]}
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"refusing": refusing}}))
    done = mcpkit("servers", "--config", str(config))
    assert f"server refusing: could not list its tools: no list {SHOWN}" in done.stderr
    assert not OBEYED.search(done.stderr)


def test_servers_json_asks_nothing_on_stdout_without_a_terminal(tmp_path: Path) -> None:
    """Issue 34 item 21: the question came on stdout before the JSON."""
    done = mcpkit("servers", "--config", str(hostile_config(tmp_path)), "--json")
    states = {row["name"]: row for row in json.loads(done.stdout)}  # stdout is JSON only
    assert "was not answered" in states["keyed"]["error"]
    assert "asks" not in done.stderr  # no terminal: nothing asked at all


def test_inspect_diff_names_added_tools_visibly_and_strict_fails_on_them(tmp_path: Path) -> None:
    report = json.loads(mcpkit("inspect", HOSTILE, "--json").stdout)
    report["tools"] = [tool for tool in report["tools"] if tool["name"] == "echo"]
    old = tmp_path / "old.json"
    old.write_text(json.dumps(report))
    done = mcpkit("inspect", HOSTILE, "--diff", str(old))
    assert done.returncode == 0  # an addition is no break
    assert done.stdout.splitlines()[0] == f"+ tool evil{SHOWN}"
    assert shown_safely(done.stdout)
    strict = mcpkit("inspect", HOSTILE, "--diff", str(old), "--strict")
    assert strict.returncode == 1 and strict.stdout == done.stdout
    alone = mcpkit("inspect", HOSTILE, "--strict")
    assert alone.returncode == 2 and "--strict goes with --diff" in alone.stderr


APPS = '''
from mcpkit import Server

server = Server("apps")
server.add_app("ui://board/view.html", "<html><body>board</body></html>")


@server.tool(app="ui://board/view.html")
def board() -> str:
    """Show the board."""
    return "board"


@server.tool(app="ui://board/view.html", visibility=["app"])
def move(square: int) -> str:
    """Play a move (the view calls it)."""
    return "moved"


@server.tool()
def plain() -> str:
    """Nothing to do with views."""
    return ""
'''


def test_list_marks_app_only_tools_and_tools_with_a_view(tmp_path: Path) -> None:
    (tmp_path / "apps.py").write_text(APPS)
    done = mcpkit("list", str(tmp_path / "apps.py"))
    assert done.returncode == 0, done.stderr
    rows = dict(line.split("\t") for line in done.stdout.splitlines())
    assert rows == {
        "board": "[view ui://board/view.html] Show the board.",
        "move": "[app only] [view ui://board/view.html] Play a move (the view calls it).",
        "plain": "Nothing to do with views.",
    }


def test_bash_completes_install_targets_shells_modes_and_subcommands() -> None:
    """(zsh runs the same function through bashcompinit: test_output checks its preamble.)"""
    import subprocess

    script = mcpkit("completion", "bash").stdout

    def complete(*words: str) -> list[str]:
        # The words typed, then the one being completed (empty: right after a space).
        setup = f"COMP_WORDS=(mcpkit {' '.join(words)} ''); COMP_CWORD={len(words) + 1}"
        run = f'{script}\n{setup}; _mcpkit; printf "%s\\n" "${{COMPREPLY[@]}}"'
        done = subprocess.run(["bash", "-c", run], capture_output=True, text=True, check=True)
        return done.stdout.split()

    assert "claude-desktop" in complete("install") and "vscode" in complete("install")
    assert "claude-desktop" in complete("install", "--name", "x")  # a value is no word
    assert "claude-desktop" not in complete("install", "cursor")  # then: the app's file
    assert complete("completion") == ["bash", "zsh", "fish"]
    assert complete("task") == ["get", "result", "cancel"]
    assert complete("registry") == ["server-json"]
    assert complete("list", "app.py", "--mode") == [
        "auto",
        "handshake",
        "per-request",
        "2026-07-28",
    ]
    assert "debug" in complete("call", "app.py", "--log-level")


def test_fish_completes_install_targets_shells_modes_and_subcommands(tmp_path: Path) -> None:
    import subprocess

    script = tmp_path / "mcpkit.fish"
    script.write_text(mcpkit("completion", "fish").stdout)

    def complete(line: str) -> list[str]:
        run = f"source {script}; complete -C '{line}'"
        done = subprocess.run(
            ["fish", "--no-config", "-c", run], capture_output=True, text=True, check=True
        )
        return sorted(row.split("\t")[0] for row in done.stdout.splitlines())

    assert "claude-desktop" in complete("mcpkit install ")
    assert complete("mcpkit completion ") == ["bash", "fish", "zsh"]
    assert complete("mcpkit task ") == ["cancel", "get", "result"]
    assert complete("mcpkit registry ") == ["server-json"]
    modes = ["2026-07-28", "auto", "handshake", "per-request"]
    assert complete("mcpkit list app.py --mode ") == modes
    assert complete("mcpkit inspect app.py --str") == ["--strict"]


# On a real terminal (tmux): the window keeps its title, the screen is not cleared, the
# clipboard is not written, and the escapes show.


def command_line(*args: str) -> str:
    return shlex.join([sys.executable, "-m", "mcpkit", *args])


def assert_the_terminal_obeyed_nothing(tmux: Tmux, marker: str) -> None:
    screen = tmux.screen()
    assert marker in screen, screen  # ESC[2J would have cleared it away
    assert SHOWN in screen, screen
    assert tmux.title() == TITLE  # ESC]0;... BEL would have retitled the window
    assert tmux.buffers() == ""  # an OSC 52 would have filled a paste buffer


def test_each_command_on_a_real_terminal_obeys_none_of_the_servers_escapes(
    tmp_path: Path,
) -> None:
    config = str(hostile_config(tmp_path))
    commands = [
        ("list", HOSTILE, "--tools", "--resources", "--prompts"),
        ("call", HOSTILE, "echo", "--log-level", "debug"),
        ("call", HOSTILE, "missing"),
        ("read", HOSTILE, "file:///evil.txt"),
        ("prompt", HOSTILE, "greet"),
        ("servers", "--config", config),  # stdin from /dev/null: nothing asked (below)
    ]
    with Tmux(tmp_path, dict(os.environ)) as tmux:
        for n, args in enumerate(commands):
            marker = f"MARKER-{n}"
            line = f"cd {shlex.quote(str(ROOT))}; echo {marker}; {command_line(*args)} </dev/null"
            tmux.run(line)
            assert_the_terminal_obeyed_nothing(tmux, marker)


def test_servers_json_asks_on_the_terminal_and_prints_only_json(tmp_path: Path) -> None:
    """Issue 34 item 21, on a terminal: the question on the screen (stderr), the answer typed,
    stdout (a file) nothing but the JSON."""
    config, out = str(hostile_config(tmp_path)), tmp_path / "out.json"
    with Tmux(tmp_path, dict(os.environ)) as tmux:
        tmux.type(f"{command_line('servers', '--config', config, '--json')} > {out}; echo EN''DED")
        tmux.wait_for("? the configuration asks: Your key")
        tmux.type("secret-answer")
        tmux.wait_for("\nENDED")  # (the line typed shows EN''DED)
    states = {row["name"]: row["state"] for row in json.loads(out.read_text())}
    assert states == {"hostile": "ready", "dying": "failed", "keyed": "ready"}


async def test_chat_on_a_real_terminal_obeys_none_of_the_servers_escapes(tmp_path: Path) -> None:
    from tests.host.fake_llm import fake_llm, openai_completion
    from tests.host.test_chat_terminal import calls, chat_argv, chat_env

    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"hostile": {"command": sys.executable,
                                                             "args": [HOSTILE]}}}))  # fmt: skip
    async with fake_llm() as fake:
        # The model calls the hostile tool, then repeats what it said.
        fake.script(calls("hostile__echo", {}), openai_completion(f"it said {EVIL}"))
        with Tmux(tmp_path, chat_env()) as tmux:
            tmux.type("echo MARKER-CHAT; " + shlex.join(chat_argv(fake, config, tmp_path)))
            await asyncio.to_thread(tmux.wait_for, "Type a message, or /help.")
            tmux.type("/tools")
            await asyncio.to_thread(tmux.wait_for, f"hostile__evil{SHOWN}  a tool {SHOWN}")
            tmux.type("go")
            await asyncio.to_thread(tmux.wait_for, "allow?")
            tmux.type("y")
            await asyncio.to_thread(tmux.wait_for, f"model> it said {SHOWN}")
            assert f"     | {SHOWN}" in tmux.screen()  # the tool's result
            assert_the_terminal_obeyed_nothing(tmux, "MARKER-CHAT")
            tmux.type("/quit")
