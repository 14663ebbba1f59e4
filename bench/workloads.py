"""One measurement: a workload, in one mode, on one system, for one repetition.

Modes:
  e2e     the system's own client against its own server, in a fresh child process
          (bench/e2e.py under the system's client interpreter)
  server  the shared minimal driver (bench/driver.py, in this process) against the server

Server and child stderr go to bench/.logs/, never to a pipe nobody reads (a chatty server
would fill it and stall).
"""

import asyncio
import contextlib
import json
import os
import signal
from dataclasses import asdict
from pathlib import Path

import driver
from common import TOOL_COUNT, Settings
from systems import BENCH, System

WORKLOADS = {
    "W1": "sequential tools/call over stdio",
    "W2": "pipelined tools/call over stdio",
    "W3": "cold start: spawn -> initialize result, server RSS",
    "W4": "tools/call of a tool taking nested pydantic models, next to echo (sequential)",
    "W5": f"tools/list with {TOOL_COUNT} tools (sequential)",
}
MODES = {"e2e": "end to end (own client + own server)", "server": "server alone (shared driver)"}
LOGS = BENCH / ".logs"
TIMEOUT_S = 300


class MeasurementFailed(RuntimeError):
    pass


def reset_logs() -> None:
    """Start this run's stderr logs empty, so a failure never shows an older run's tail."""
    LOGS.mkdir(exist_ok=True)
    for old in LOGS.glob("*.stderr"):
        old.unlink()


def _log_path(system: System, mode: str) -> Path:
    LOGS.mkdir(exist_ok=True)
    return LOGS / f"{system.name}-{mode}.stderr"


def _tail(path: Path, lines: int = 1) -> str:
    """The last lines of a stderr log: for a Python traceback, the exception itself."""
    text = path.read_text(errors="replace").strip().splitlines() if path.exists() else []
    return " | ".join(line.strip() for line in text[-lines:])


async def measure(system: System, workload: str, mode: str, settings: Settings) -> dict:
    """Run one repetition; raises MeasurementFailed with the reason and the stderr tail."""
    log = _log_path(system, mode)
    try:
        if mode == "server":
            with log.open("ab") as stderr:
                argv = list(system.server_argv(workload))
                run = driver.measure(argv, workload, settings, stderr)
                return await asyncio.wait_for(run, TIMEOUT_S)
        return await asyncio.wait_for(_e2e(system, workload, settings, log), TIMEOUT_S)
    except MeasurementFailed:
        raise
    except Exception as exc:
        reason = f"{type(exc).__name__}: {exc}".strip()
        raise MeasurementFailed(f"{reason}; server stderr: {_tail(log)}") from exc


async def _e2e(system: System, workload: str, settings: Settings, log: Path) -> dict:
    argv = [
        system.client_python,
        str(BENCH / "e2e.py"),
        system.name,
        workload,
        "--settings",
        json.dumps(asdict(settings)),
        "--",
        *system.server_argv(workload),
    ]
    with log.open("ab") as stderr:
        child = await asyncio.create_subprocess_exec(
            *argv, stdout=asyncio.subprocess.PIPE, stderr=stderr, start_new_session=True
        )
        try:
            out, _ = await child.communicate()
        finally:
            _kill_group(child.pid)  # a server the client left behind, or the client itself
            await child.wait()
    if child.returncode != 0:
        raise MeasurementFailed(f"client exited {child.returncode}: {_tail(log)}")
    return json.loads(out.splitlines()[-1])


def _kill_group(pgid: int) -> None:
    """Kill what is left of the process group the e2e child leads (started by us)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


async def preflight(system: System) -> str | None:
    """Start the server, initialize, call echo once. None if fine, else the reason."""
    one_call = Settings(calls=1, warmup=0, spawns=1)
    try:
        await measure(system, "W3", "server", one_call)
    except MeasurementFailed as exc:
        return str(exc)
    return None
