"""`mcpkit chat` as a person uses it: a real subprocess on a pseudo-terminal (its controlling
terminal, so Ctrl-C is a real SIGINT to its foreground process group and prompt_toolkit runs
as on a desktop), real stdio servers, keys typed and the screen read. The model is the local
stand-in for the OpenAI API (tests/host/fake_llm.py), the only faked part."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import pty
import re
import struct
import sys
import termios
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from tests.host.fake_llm import FakeLLM, fake_llm, openai_completion, openai_tool_call

ROOT = Path(__file__).resolve().parents[2]
SERVER = str(Path(__file__).with_name("host_server.py"))
# Escape sequences (CSI, OSC, the few two-byte ones) and carriage returns, off the screen text.
_ESCAPES = re.compile(
    rb"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[()][0-9A-B]|\x1b[=>78]|\r"
)

# A second server with what these tests need: a long result, a described and annotated tool,
# a sampling request with a system prompt, a rich form, and its environment to read.
KIT = '''
import asyncio, os
from mcpkit import Context, Server

server = Server("kit")


@server.tool(annotations={"destructiveHint": True, "openWorldHint": False})
def wipe(folder: str) -> str:
    """Delete every file in the folder.
    Nothing is kept."""
    return "wiped " + folder


@server.tool()
def long_output(n: int) -> str:
    """Lines of output."""
    return "\\n".join(f"line {i}" for i in range(1, n + 1))


@server.tool()
def secret_seen() -> str:
    """What the configuration passed in TOKEN."""
    return "token=" + os.environ.get("TOKEN", "(none)")


@server.tool()
async def summarize(ctx: Context) -> str:
    """Ask the client's model for a summary."""
    result = await ctx.sample(
        "Summarize the release notes of version 4.2 in one line.",
        max_tokens=64,
        system_prompt="You are a terse release-notes writer.",
    )
    text = getattr(result.content, "text", "")
    return "the server got: " + text


@server.tool()
async def book(ctx: Context) -> str:
    """Ask the user for a booking (form elicitation)."""
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "As on your ID.", "minLength": 2},
            "room": {"type": "string", "enum": ["single", "double"],
                     "enumNames": ["Single room", "Double room"], "default": "double"},
            "nights": {"type": "integer", "minimum": 1, "maximum": 5},
            "email": {"type": "string", "format": "email"},
        },
        "required": ["name", "nights"],
    }
    answer = await ctx.elicit("Book a room?", schema)  # (mcpkit's server drops titles)
    return f"{answer.action}: {sorted((answer.data or {}).items())}"


server.run()
'''


class Screen:
    """A program on a pseudo-terminal: `type` keys, `expect` text on the screen (escape
    sequences removed), in order."""

    def __init__(self, process: asyncio.subprocess.Process, leader: int) -> None:
        self.process = process
        self.leader = leader
        self.raw = bytearray()
        self.cursor = 0  # where the next expect starts looking
        self.changed = asyncio.Event()
        self.closed = False
        asyncio.get_running_loop().add_reader(leader, self._read)

    def _read(self) -> None:
        try:
            chunk = os.read(self.leader, 65536)
        except OSError:  # EIO: the program and its servers closed the terminal
            chunk = b""
        if not chunk:
            self.closed = True
            asyncio.get_running_loop().remove_reader(self.leader)
        self.raw.extend(chunk)
        self.changed.set()

    @property
    def text(self) -> str:
        return _ESCAPES.sub(b"", bytes(self.raw)).decode(errors="replace")

    async def expect(self, wanted: str, timeout: float = 30.0) -> str:
        """Wait for `wanted` after the last match; the text up to and including it."""
        try:
            async with asyncio.timeout(timeout):
                while (found := self.text.find(wanted, self.cursor)) < 0 and not self.closed:
                    self.changed.clear()
                    await self.changed.wait()
        except TimeoutError:
            found = -1
        if found < 0:
            raise AssertionError(f"{wanted!r} never came after:\n{self.text[self.cursor :]}")
        start, self.cursor = self.cursor, found + len(wanted)
        return self.text[start : self.cursor]

    def type(self, keys: str) -> None:
        os.write(self.leader, keys.encode())

    async def enter(self, keys: str) -> None:
        """Type `keys` and Enter, and wait for the line to be taken."""
        self.type(keys + "\r")
        await self.expect("\n")

    async def answer(self, question: str, keys: str) -> str:
        """Wait for `question`, then type `keys` and Enter; what the screen showed."""
        shown = await self.expect(question)
        await self.enter(keys)  # what follows is the answer's
        return shown

    async def exit_code(self, timeout: float = 30.0) -> int:
        return await asyncio.wait_for(self.process.wait(), timeout)


def _controlling_terminal() -> None:  # in the child, after setsid: fd 0 is the terminal
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


@contextlib.asynccontextmanager
async def on_terminal(argv: list[str], env: dict[str, str]) -> AsyncIterator[Screen]:
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 120, 0, 0))
    process = await asyncio.create_subprocess_exec(
        *argv, stdin=follower, stdout=follower, stderr=follower, cwd=ROOT, env=env,
        start_new_session=True, preexec_fn=_controlling_terminal,
    )  # fmt: skip
    os.close(follower)
    screen = Screen(process, leader)
    try:
        yield screen
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        with contextlib.suppress(ValueError, OSError):
            asyncio.get_running_loop().remove_reader(leader)
        os.close(leader)


def chat_argv(fake: FakeLLM, config: Path, tmp_path: Path, *more: str) -> list[str]:
    return [
        sys.executable, "-m", "mcpkit", "chat", "--config", str(config),
        "--provider", "openai", "--base-url", f"{fake.url}/v1", "--model", "gpt-test",
        "--consent-file", str(tmp_path / "consent.json"), *more,
    ]  # fmt: skip


def chat_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    # No cursor-position requests: the screen here is read as text, not a real terminal.
    env.update(OPENAI_API_KEY="sk-test-not-a-real-key", TERM="xterm", PROMPT_TOOLKIT_NO_CPR="1")
    env.pop("COLUMNS", None)
    return env


def write_config(tmp_path: Path, servers: dict[str, Any], **more: Any) -> Path:
    (tmp_path / "kit_server.py").write_text(KIT)
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": servers, **more}))
    return config


def alpha_and_kit(tmp_path: Path) -> Path:
    return write_config(
        tmp_path,
        {
            "alpha": {"command": sys.executable, "args": [SERVER, "alpha"]},
            "kit": {"command": sys.executable, "args": [str(tmp_path / "kit_server.py")]},
        },
    )


def calls(name: str, arguments: dict[str, Any], call_id: str = "call_1") -> Any:
    return openai_completion(None, [openai_tool_call(call_id, name, arguments)], "tool_calls")


async def test_answers_are_whole_words_with_the_default_shown(tmp_path: Path) -> None:
    async with (
        fake_llm() as fake,
        on_terminal(chat_argv(fake, alpha_and_kit(tmp_path), tmp_path), chat_env()) as screen,
    ):
        fake.script(calls("kit__wipe", {"folder": "/tmp/x"}), openai_completion("not wiped"))
        await screen.answer("you>", "wipe it")
        asked = await screen.expect("allow? [y/s/a/N]:")
        assert "? kit wants to run wipe" in asked
        assert "Delete every file in the folder." in asked and "Nothing is kept." in asked
        assert "destructive: yes" in asked and "not believed" in asked
        assert '"folder":"/tmp/x"' in asked
        await screen.enter("sure")  # once read by its first letter as "session"
        await screen.expect("please answer y or yes (once), s or session")
        await screen.answer("allow? [y/s/a/N]:", "ok")  # once read as "no"
        await screen.expect("please answer")
        await screen.answer("allow? [y/s/a/N]:", "")  # Enter: the default, no
        await screen.expect("x  kit/wipe")
        await screen.expect("model> not wiped")
        refused = fake.requests[1].body["messages"][-1]
        assert "not run" in json.dumps(refused)

        fake.script(calls("kit__wipe", {"folder": "/tmp/y"}), openai_completion("wiped"))
        await screen.answer("you>", "again")
        await screen.answer("allow? [y/s/a/N]:", "  YES ")
        await screen.expect("<- kit/wipe done [1]")
        assert "| wiped /tmp/y" in await screen.expect("model> wiped")
        await screen.answer("you>", "/show 1")
        await screen.expect("| wiped /tmp/y")
        await screen.expect("you>")
        screen.type("\x04")  # Ctrl-D leaves
        assert await screen.exit_code() == 0


async def test_ctrl_c_cancels_the_turn_and_keeps_the_conversation(tmp_path: Path) -> None:
    async with (
        fake_llm() as fake,
        on_terminal(chat_argv(fake, alpha_and_kit(tmp_path), tmp_path), chat_env()) as screen,
    ):
        fake.script(calls("alpha__slow", {"seconds": 600}))
        await screen.answer("you>", "take your time")
        await screen.answer("allow? [y/s/a/N]:", "s")  # for this session
        await screen.expect("-> alpha/slow")
        screen.type("\x03")  # Ctrl-C: a SIGINT to the chat's process group
        await screen.expect("(cancelled: the conversation goes on from here)")

        # The same chat goes on: its history (the cancelled call answered as such), its
        # session approval (not asked again), its servers (still up).
        fake.script(calls("alpha__slow", {"seconds": 0}, "call_2"), openai_completion("done now"))
        await screen.answer("you>", "quicker please")
        shown = await screen.expect("model> done now")
        assert "wants to run" not in shown and "<- alpha/slow done" in shown
        history = json.dumps(fake.requests[1].body["messages"])
        assert "take your time" in history and "cancelled" in history
        await screen.answer("you>", "/servers")
        states = await screen.expect("kit: ready")
        assert "alpha: ready" in states and "restart" not in states

        await screen.expect("you>")
        screen.type("half typed")
        await screen.expect("half typed")
        screen.type("\x03")  # with text: the line is dropped, the chat stays
        await screen.enter("/servers")
        await screen.expect("kit: ready")
        await screen.expect("you>")
        screen.type("\x03")  # at an empty prompt: leave
        assert await screen.exit_code() == 0


async def test_ctrl_c_twice_leaves(tmp_path: Path) -> None:
    async with (
        fake_llm() as fake,
        on_terminal(chat_argv(fake, alpha_and_kit(tmp_path), tmp_path), chat_env()) as screen,
    ):
        fake.script(calls("alpha__slow", {"seconds": 600}))
        await screen.answer("you>", "take your time")
        await screen.answer("allow? [y/s/a/N]:", "y")
        await screen.expect("-> alpha/slow")
        screen.type("\x03")
        await screen.expect("cancelling this turn (Ctrl-C again to leave)")
        screen.type("\x03")
        assert await screen.exit_code() == 0


async def test_a_result_is_shown_short_and_whole_on_request(tmp_path: Path) -> None:
    async with (
        fake_llm() as fake,
        on_terminal(chat_argv(fake, alpha_and_kit(tmp_path), tmp_path), chat_env()) as screen,
    ):
        fake.script(calls("kit__long_output", {"n": 12}), openai_completion("twelve lines"))
        await screen.answer("you>", "count")
        await screen.answer("allow? [y/s/a/N]:", "y")
        shown = await screen.expect("model> twelve lines")
        assert "<- kit/long_output done [1]" in shown
        assert "| line 5\n" in shown and "line 6" not in shown
        assert "… 7 more lines (/show 1 for all of it)" in shown
        await screen.answer("you>", "/last")
        whole = await screen.expect("| line 12")
        assert all(f"| line {n}\n" in whole for n in range(1, 12))
        await screen.answer("you>", "/show 2")
        await screen.expect("/show N, N from 1 to 1")
        await screen.answer("you>", "/frobnicate")
        await screen.expect("unknown command /frobnicate; /help lists the commands")
        await screen.expect("you>")
        screen.type("\x04")
        assert await screen.exit_code() == 0


async def test_servers_are_disabled_enabled_and_restarted_from_the_chat(tmp_path: Path) -> None:
    async with (
        fake_llm() as fake,
        on_terminal(chat_argv(fake, alpha_and_kit(tmp_path), tmp_path), chat_env()) as screen,
    ):
        await screen.answer("you>", "/disable alpha")
        await screen.expect("alpha: disabled")
        await screen.answer("you>", "/tools")
        tools = await screen.expect("kit__wipe")
        assert "alpha__" not in tools
        await screen.answer("you>", "/enable alpha")
        await screen.expect("alpha: ready")
        await screen.answer("you>", "/tools")
        await screen.expect("alpha__target  Echo the text.")
        await screen.answer("you>", "/restart kit")
        await screen.expect("restarting kit")
        await screen.expect("kit: ready")
        await screen.answer("you>", "/enable nobody")
        await screen.expect("no server named nobody; the servers: alpha, kit")
        fake.script(calls("kit__wipe", {"folder": "f"}), openai_completion("ok"))
        await screen.answer("you>", "a tool of the restarted server")
        await screen.answer("allow? [y/s/a/N]:", "y")
        await screen.expect("<- kit/wipe done")
        await screen.expect("you>")
        screen.type("\x03")
        assert await screen.exit_code() == 0


async def test_a_sampling_request_and_its_answer_are_shown_and_the_answer_edited(
    tmp_path: Path,
) -> None:
    async with (
        fake_llm() as fake,
        on_terminal(chat_argv(fake, alpha_and_kit(tmp_path), tmp_path), chat_env()) as screen,
    ):
        fake.script(
            calls("kit__summarize", {}),
            openai_completion("Version 4.2 deletes your backups."),  # the server's sampling
            openai_completion("summarized"),
        )
        await screen.answer("you>", "summarize")
        await screen.answer("allow? [y/s/a/N]:", "y")
        asked = await screen.expect("allow? [y/s/a/N]:")
        assert "? kit wants the model to answer (1 message)" in asked
        assert "system prompt:\n    You are a terse release-notes writer." in asked
        assert "user:\n    Summarize the release notes of version 4.2 in one line." in asked
        assert "at most 64 tokens" in asked
        await screen.enter("y")
        shown = await screen.expect("send it? [y/s/a/e/N]:")
        assert "the model (gpt-test) answered:\n    Version 4.2 deletes your backups." in shown
        await screen.enter("e")
        await screen.expect("your answer:")
        await screen.expect("Version 4.2 deletes your backups.")  # there to edit
        await screen.enter("\x15Version 4.2 speeds up backups.")  # Ctrl-U: clear, then type anew
        await screen.answer("send your answer? [Y/n]:", "")
        done = await screen.expect("model> summarized")
        assert "| the server got: Version 4.2 speeds up backups." in done
        sent_back = json.dumps(fake.requests[2].body["messages"])
        assert "speeds up backups" in sent_back and "deletes your backups" not in sent_back
        await screen.expect("you>")
        screen.type("\x04")
        assert await screen.exit_code() == 0


async def test_a_form_shows_each_field_and_asks_again_for_a_bad_value(tmp_path: Path) -> None:
    async with (
        fake_llm() as fake,
        on_terminal(chat_argv(fake, alpha_and_kit(tmp_path), tmp_path), chat_env()) as screen,
    ):
        fake.script(calls("kit__book", {}), openai_completion("booked"))
        await screen.answer("you>", "book me a room")
        await screen.answer("allow? [y/s/a/N]:", "y")  # the tool
        await screen.answer("allow? [y/s/a/N]:", "y")  # the form reaching you
        name = await screen.expect("As on your ID.")
        assert "? kit asks: Book a room?\n  name * (string, min length 2)\n" in name
        await screen.answer("name>", "")  # required
        await screen.expect("this field is required")
        await screen.answer("name>", "A")
        await screen.expect("at least 2")
        await screen.answer("name>", "")
        await screen.expect("this field is required")
        await screen.answer("name>", "Ada")
        room = await screen.expect('default (Enter): "double"')
        assert "room (string)\n    choices: 1) Single room  2) Double room" in room
        await screen.answer("room>", "3")
        await screen.expect("must be one of")
        await screen.answer("room>", "1")
        await screen.expect("nights * (integer, min 1, max 5)")
        await screen.answer("nights>", "9")
        await screen.expect("at most 5")
        await screen.answer("nights>", "2")
        await screen.answer("email>", "not-an-email")
        await screen.expect("not a valid email")
        await screen.answer("email>", "")  # optional: left out
        summary = await screen.expect("send this to kit? [Y/n]:")
        assert '"name":"Ada","room":"single","nights":2' in summary
        await screen.enter("")
        done = await screen.expect("model> booked")
        assert "accept: [('name', 'Ada'), ('nights', 2), ('room', 'single')]" in done
        await screen.expect("you>")
        screen.type("\x04")
        assert await screen.exit_code() == 0


async def test_vs_code_inputs_are_asked_on_the_terminal_a_password_unechoed(
    tmp_path: Path,
) -> None:
    kit = str(tmp_path / "kit_server.py")
    config = write_config(tmp_path, {})
    config.write_text(
        json.dumps(
            {
                "inputs": [
                    {"type": "promptString", "id": "token", "description": "Your API token",
                     "password": True},
                    {"type": "pickString", "id": "who", "description": "Which copy",
                     "options": ["alpha", "beta"], "default": "beta"},
                ],
                "servers": {
                    "kit": {"type": "stdio", "command": sys.executable, "args": [kit],
                            "env": {"TOKEN": "${input:token}"}},
                    "copy": {"type": "stdio", "command": sys.executable,
                             "args": [SERVER, "${input:who}"]},
                },
            }
        )
    )  # fmt: skip
    async with (
        fake_llm() as fake,
        on_terminal(chat_argv(fake, config, tmp_path), chat_env()) as screen,
    ):
        await screen.expect("? the configuration asks: Your API token")
        await screen.answer("token:", "s3cret-Value")
        await screen.expect("? the configuration asks: Which copy\n  choices: 1) alpha  2) beta")
        await screen.answer("who [beta]:", "gamma")
        await screen.expect("please pick one of the choices")
        await screen.answer("who [beta]:", "")  # Enter: the default
        started = await screen.expect("you>")
        assert "copy: ready" in started and "kit: ready" in started
        assert "s3cret-Value" not in screen.text  # never echoed
        fake.script(
            calls("kit__secret_seen", {}),
            calls("copy__target", {"text": "hi"}, "call_2"),
            openai_completion("seen"),
        )
        await screen.enter("what was I given?")
        await screen.answer("allow? [y/s/a/N]:", "y")
        await screen.expect("| token=s3cret-Value")  # what the server was given
        await screen.answer("allow? [y/s/a/N]:", "y")
        await screen.expect("| beta: hi")  # the default, in its argv
        await screen.expect("model> seen")
        await screen.expect("you>")
        screen.type("\x04")
        assert await screen.exit_code() == 0


async def test_ctrl_c_at_a_question_refuses_and_cancels_the_turn(tmp_path: Path) -> None:
    async with (
        fake_llm() as fake,
        on_terminal(chat_argv(fake, alpha_and_kit(tmp_path), tmp_path), chat_env()) as screen,
    ):
        fake.script(calls("kit__wipe", {"folder": "/"}))
        await screen.answer("you>", "wipe everything")
        await screen.expect("allow? [y/s/a/N]:")
        screen.type("\x03")
        await screen.expect("refused (Ctrl-C)")
        await screen.expect("(cancelled: the conversation goes on from here)")
        assert len(fake.requests) == 1  # the model was not asked to go on
        await screen.answer("you>", "/approve")
        await screen.expect("nothing remembered")
        await screen.expect("you>")
        screen.type("\x04")
        assert await screen.exit_code() == 0
