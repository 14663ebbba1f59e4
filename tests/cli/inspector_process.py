"""`mcpkit inspect` / `mcpkit dev` as a real subprocess, talked to over HTTP as the page does
(the token from the URL the command prints, the event stream read as it comes)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import parse_qs, urlsplit

import httpx
import orjson

WAIT = 60.0  # seconds a start or an event may take on a loaded machine


@dataclass
class Running:
    process: subprocess.Popen[str]
    base: str
    token: str

    def client(self) -> httpx.Client:
        headers = {"authorization": f"Bearer {self.token}"}
        return httpx.Client(base_url=self.base, headers=headers, timeout=WAIT)

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        with self.client() as http:
            answer = http.post("/api/request", json={"method": method, "params": params})
        assert answer.status_code == 200, answer.text
        result: dict[str, Any] = answer.json()
        return result

    def wait_for_state(self, matches: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """The first state event (the stream starts with the current state) that matches."""
        with self.client() as http, http.stream("GET", "/api/events") as stream:
            for line in stream.iter_lines():
                if not line.startswith("data: "):
                    continue
                event = orjson.loads(line[6:])
                if event.get("type") == "state" and matches(event):
                    return dict(event)
        raise AssertionError("the event stream ended")

    def line(self, contains: str) -> str:
        """The next line of the command's stdout that holds `contains` (others skipped)."""
        out = self.process.stdout
        assert out is not None
        return _line(out, contains)


def _line(out: TextIO, contains: str) -> str:
    for line in out:
        if contains in line:
            return line
    raise AssertionError(f"the command's output ended before {contains!r}")


@contextmanager
def running(*args: str, cwd: Path) -> Iterator[Running]:
    """`python -m mcpkit ARGS` until the block ends (then Ctrl-C, as a person stops it)."""
    env = {**os.environ, "BROWSER": "true"}  # never a real browser
    process = subprocess.Popen(
        [sys.executable, "-m", "mcpkit", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        url = _line(process.stdout, "mcpkit inspector: ").split(": ", 1)[1].strip()
        parts = urlsplit(url)
        token = parse_qs(parts.query)["token"][0]
        yield Running(process, f"{parts.scheme}://{parts.netloc}", token)
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=WAIT)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
