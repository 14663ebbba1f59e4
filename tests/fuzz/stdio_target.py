"""A real stdio server process to fuzz (tests/fuzz/server.py), its stdout read line by line by
a thread, every line checked: JSON, JSON-RPC 2.0, answers only, no traceback or path."""

from __future__ import annotations

import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import orjson

from tests.fuzz.frames import ENVELOPE, MODERN

SERVER = Path(__file__).resolve().parent / "server.py"
ANSWER_WITHIN = 15.0  # seconds for every request of one example to be answered


class StdioTarget:
    def __init__(self, era: str) -> None:
        self.era = era
        self.process = subprocess.Popen(
            [sys.executable, str(SERVER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.examples = 0
        if era != MODERN:
            self.send([self._initialize()])
            self.wait_for({"init"})
            self.send([b'{"jsonrpc":"2.0","method":"notifications/initialized"}'])

    def _initialize(self) -> bytes:
        info = ENVELOPE["io.modelcontextprotocol/clientInfo"]
        params = {"protocolVersion": self.era, "capabilities": {}, "clientInfo": info}
        message = {"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": params}
        return orjson.dumps(message)

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def send(self, frames: list[bytes]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(b"".join(frame + b"\n" for frame in frames))
        self.process.stdin.flush()

    def wait_for(self, ids: set[str]) -> dict[str, int]:
        """Read until every id in `ids` was answered; how many answers each got. Raises
        AssertionError on a line that is not a JSON-RPC answer, a leak, or a hang."""
        counts: dict[str, int] = {}
        deadline = time.monotonic() + ANSWER_WITHIN
        while not ids <= counts.keys():
            left = deadline - time.monotonic()
            assert left > 0, f"no answer within {ANSWER_WITHIN} s for {sorted(ids - counts.keys())}"
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                continue
            assert line is not None, f"the server exited ({self.process.poll()})"
            for message in check_line(line):
                ident = message.get("id")
                if isinstance(ident, str):
                    counts[ident] = counts.get(ident, 0) + 1
        return counts

    def drain(self) -> None:
        """Take what is still on stdout (late answers), checking it the same way."""
        time.sleep(0.05)
        while True:
            try:
                line = self.lines.get_nowait()
            except queue.Empty:
                return
            assert line is not None, f"the server exited ({self.process.poll()})"
            check_line(line)

    def rss_kib(self) -> int:
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        rss = next(line for line in status.splitlines() if line.startswith("VmRSS:"))
        return int(rss.split()[1])

    def close(self) -> None:
        if self.process.stdin:
            self.process.stdin.close()
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._reader.join(5)
        if self.process.stdout:
            self.process.stdout.close()


def check_line(line: bytes) -> list[dict[str, Any]]:
    """The messages of one stdout line; fails unless it is JSON-RPC 2.0 with nothing leaked."""
    assert line.endswith(b"\n"), f"a partial line on stdout: {line[:200]!r}"
    value = orjson.loads(line)
    messages = value if isinstance(value, list) else [value]
    for message in messages:
        assert isinstance(message, dict) and message.get("jsonrpc") == "2.0", line[:200]
        if "error" in message:
            text = orjson.dumps(message["error"]).decode()
            assert "Traceback" not in text and ".py" not in text and "/work/" not in text, text
    return messages
