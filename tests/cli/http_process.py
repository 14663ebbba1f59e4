"""`python -m mcpkit ... --transport http` in a process group of its own, for the tests that
start one (log formats, draining, with and without --workers): started on an unused port,
waited for until it answers, stopped with SIGTERM as an orchestrator does (the parent only),
and its whole group killed if a test leaves it running."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx

from tests.http.servers import unused_port


@dataclass(frozen=True)
class Running:
    process: asyncio.subprocess.Process
    base: str  # http://127.0.0.1:PORT

    async def stop(self, seconds: float = 60) -> list[str]:
        """SIGTERM to the parent alone; its output's lines (if captured) once it exited."""
        self.process.send_signal(signal.SIGTERM)
        out = b""
        if self.process.stdout is not None:
            out = await asyncio.wait_for(self.process.stdout.read(), seconds)
        await asyncio.wait_for(self.process.wait(), seconds)
        return out.decode().splitlines()


@contextlib.asynccontextmanager
async def mcpkit_http(
    args: Sequence[str | Path],
    *,
    env: dict[str, str] | None = None,
    probe: str = "/healthz",
    capture: bool = False,
    program: Sequence[str] = ("-m", "mcpkit"),
) -> AsyncIterator[Running]:
    """`python -m mcpkit ARGS --port P` (or `python PROGRAM ARGS --port P`), answering `probe`;
    `capture`: its stderr and stdout (uvicorn's text access lines) piped together (read them
    with `stop()`), else shared with the test's."""
    port = unused_port()
    argv = [sys.executable, *program, *map(str, args), "--port", str(port)]
    process = await asyncio.create_subprocess_exec(
        *argv,
        env={**os.environ, **(env or {})},
        stdout=asyncio.subprocess.PIPE if capture else None,
        stderr=asyncio.subprocess.STDOUT if capture else None,
        start_new_session=True,  # its workers (and their children) in a group of its own
    )
    running = Running(process, f"http://127.0.0.1:{port}")
    try:
        await _answering(running, probe)
        yield running
    finally:
        # Only while the group's id is still its own: once the parent is reaped and its
        # group empty, the number may be another process's (a killpg would end that one).
        if process.returncode is None or group_alive(process.pid):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
        await process.wait()


async def _answering(running: Running, probe: str) -> None:
    deadline = time.monotonic() + 90  # workers each import mcpkit: slow on a loaded machine
    async with httpx.AsyncClient(timeout=10) as http:
        while True:
            try:
                await http.get(running.base + probe)
                return
            except httpx.TransportError:
                if running.process.returncode is not None or time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.05)


def group_alive(group: int) -> list[int]:
    """The live (not zombie) processes of process group `group` (Linux's /proc)."""
    alive = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            # pid (comm) state ppid pgrp ...: comm may hold spaces, so split after its ')'
            fields = stat.read_text().rpartition(")")[2].split()
            if int(fields[2]) == group and fields[0] != "Z":
                alive.append(int(stat.parent.name))
    return alive


async def group_gone(group: int, seconds: float) -> bool:
    """Whether every process of `group` has exited within `seconds` (polled: nothing tells
    another process when a group empties)."""
    deadline = time.monotonic() + seconds
    while group_alive(group):
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True
