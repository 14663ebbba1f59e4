"""A real terminal for tests: a private tmux server (its own socket), one pane running bash,
keys sent and the screen read back, with what the terminal made of the escape sequences it got
(the pane's title, the paste buffers an OSC 52 would fill)."""

from __future__ import annotations

import itertools
import os
import subprocess
import time
from pathlib import Path
from types import TracebackType

TITLE = "KEPT-TITLE"


class Tmux:
    """`with Tmux(folder) as tmux:` a 250x50 pane titled TITLE, OSC 52 honoured (so a write
    to the clipboard would show as a paste buffer); the server is killed on the way out."""

    def __init__(self, folder: Path, env: dict[str, str], width: int = 250) -> None:
        self.socket = str(folder / "tmux.sock")
        self.env = {k: v for k, v in env.items() if k not in ("TMUX", "TMUX_PANE", "COLUMNS")}
        self.env["TERM"] = "xterm-256color"
        self.width = width
        self._signals = itertools.count(1)

    def tmux(self, *args: str, timeout: float = 30) -> str:
        argv = ["tmux", "-S", self.socket, "-f", "/dev/null", *args]
        done = subprocess.run(
            argv, capture_output=True, text=True, env=self.env, timeout=timeout, check=True
        )
        return done.stdout

    def __enter__(self) -> Tmux:
        size = ["-x", str(self.width), "-y", "50"]
        self.tmux("new-session", "-d", "-s", "t", *size, "bash --norc --noprofile")
        self.tmux("set-option", "-g", "set-clipboard", "on")
        self.tmux("select-pane", "-t", "t", "-T", TITLE)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        subprocess.run(["tmux", "-S", self.socket, "kill-server"], env=self.env, check=False)

    def type(self, text: str) -> None:
        """Type `text` and Enter."""
        self.tmux("send-keys", "-t", "t", "-l", text)
        self.tmux("send-keys", "-t", "t", "Enter")

    def run(self, command: str, timeout: float = 30) -> None:
        """Run a shell command in the pane; return once it has ended (tmux's wait-for).
        Raises AssertionError, with the screen, when it has not ended after `timeout`."""
        channel = f"done-{os.getpid()}-{next(self._signals)}"
        self.type(f"{command}; tmux -S {self.socket} wait-for -S {channel}")
        try:
            self.tmux("wait-for", channel, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"{command!r} did not end:\n{self.screen()}") from None

    def screen(self) -> str:
        """What the pane shows now (its visible lines, not its history)."""
        return self.tmux("capture-pane", "-p", "-t", "t")

    def wait_for(self, text: str, timeout: float = 30) -> str:
        """The screen once it shows `text`. Raises AssertionError after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while text not in (shown := self.screen()):
            assert time.monotonic() < deadline, f"never shown: {text!r}\n{shown}"
            time.sleep(0.1)  # the pane is polled: tmux has no "wait for this text"
        return shown

    def title(self) -> str:
        return self.tmux("display-message", "-p", "-t", "t", "#{pane_title}").strip()

    def buffers(self) -> str:
        """The paste buffers: an OSC 52 the terminal obeyed leaves one."""
        return self.tmux("list-buffers")
