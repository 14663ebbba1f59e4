"""How long a Host takes to connect many stdio servers at once, and what a dead one costs.

One run starts, with `HostServers`, a server that takes `--slow` seconds to start (alone: the
slowest single server's start), then that server beside `--count - 1` ordinary mcpkit echo
servers, a command that does not exist and a server that never answers its handshake, all at
once. Target (issue 17): every good server ready within 1.5x the slowest single start; the
dead ones reported with their reason (the missing command at once, the silent one at its
connect timeout) and the good ones ready on time regardless.

    .venv/bin/python bench/host_connect.py                 # 20 servers, a 2 s start
    .venv/bin/python bench/host_connect.py --count 20 --slow 3 --reps 3
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from mcpkit.host import HostServers, ServerState, Timing, load_config

HERE = Path(__file__).resolve().parent
ECHO = str(HERE / "servers" / "mcpkit_server.py")
SLOW = str(HERE / "servers" / "slow_start.py")
SILENT = str(HERE.parent / "tests" / "fixtures" / "silent.py")


async def ready_times(entries: dict[str, dict[str, object]], timeout: float) -> dict[str, float]:
    """Seconds from start until each server was ready or failed (state polled every 5 ms)."""
    servers = HostServers(
        load_config({"mcpServers": entries}),
        timing=Timing(connect_timeout=timeout),
        client_options={"mode": "handshake"},
    )
    seen: dict[str, float] = {}
    started = time.monotonic()
    starting = asyncio.ensure_future(servers.start())
    while len(seen) < len(entries):
        for name, status in servers.status().items():
            if name not in seen and status.state in (ServerState.READY, ServerState.FAILED):
                seen[name] = time.monotonic() - started
        await asyncio.sleep(0.005)
    await starting
    states = {name: s.state for name, s in servers.status().items()}
    await servers.aclose()
    assert all(states[n] is ServerState.READY for n in entries if n.startswith(("echo", "slow"))), (
        states
    )
    return seen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=20, help="good servers, the slow one included")
    parser.add_argument("--slow", type=float, default=2.0, help="seconds the slow one takes")
    parser.add_argument("--timeout", type=float, default=5.0, help="connect timeout (s)")
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    python = sys.executable
    slow = {"command": python, "args": [SLOW, str(args.slow)]}
    alone, together, dead, silent = [], [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.reps):
            alone.append(asyncio.run(ready_times({"slow": slow}, args.timeout))["slow"])
            entries: dict[str, dict[str, object]] = {"slow": slow}
            for n in range(args.count - 1):
                entries[f"echo{n}"] = {"command": python, "args": [ECHO]}
            entries["dead"] = {"command": "no-such-mcp-server"}
            entries["silent"] = {"command": python, "args": [SILENT, str(Path(tmp) / "pid")]}
            seen = asyncio.run(ready_times(entries, args.timeout))
            together.append(max(t for n, t in seen.items() if n.startswith(("echo", "slow"))))
            dead.append(seen["dead"])
            silent.append(seen["silent"])
    single, many = statistics.median(alone), statistics.median(together)
    print(f"slowest single server ready after {single:.2f} s (median of {args.reps})")
    print(
        f"{args.count} good servers + a missing command + a silent one, at once: every good "
        f"one ready after {many:.2f} s = {many / single:.2f}x the slowest single start "
        f"(target <= 1.5x: {'PASS' if many <= 1.5 * single else 'FAIL'})"
    )
    print(
        f"missing command reported failed after {statistics.median(dead):.2f} s; silent server "
        f"after {statistics.median(silent):.2f} s (connect timeout {args.timeout:g} s)"
    )


if __name__ == "__main__":
    main()
