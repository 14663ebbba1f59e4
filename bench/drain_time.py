"""How long a SIGTERMed `mcpkit run --transport http` takes to exit with 0, 10 and 100 tool
calls in flight, and whether every one of them got its answer (docs/deploy.md has the
figures). A program you run and read, not a timed test:

    .venv/bin/python bench/drain_time.py [--calls 0,10,100] [--work 1.0] [--reps 3]

Each call runs a tool that sleeps `--work` s; SIGTERM is sent once the server holds all of
them. The time printed is from SIGTERM to the process's exit; what the calls' own remaining
work accounts for is up to `--work` s of it.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

from mcpkit import Client

SERVER = """
import asyncio
from mcpkit import Server

server = Server("drain-bench")
held = []


@server.tool()
async def work(seconds: float) -> str:
    held.append(None)
    await asyncio.sleep(seconds)
    return "done"


@server.tool()
def in_flight() -> int:
    return len(held)
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def once(script: Path, calls: int, work: float) -> tuple[float, int]:
    """Seconds from SIGTERM to exit, and how many calls were answered."""
    port = free_port()
    argv = [sys.executable, "-m", "mcpkit", "run", str(script), "--transport", "http",
            "--port", str(port), "--drain-timeout", "30"]  # fmt: skip
    process = await asyncio.create_subprocess_exec(*argv, stderr=asyncio.subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        async with httpx.AsyncClient() as http:
            while True:
                try:
                    await http.get(f"{base}/healthz")
                    break
                except httpx.TransportError:
                    await asyncio.sleep(0.05)
        async with Client(f"{base}/mcp", mode="handshake", timeout=60) as client:
            pending = [
                asyncio.ensure_future(client.call_tool("work", {"seconds": work}))
                for _ in range(calls)
            ]
            while (await client.call_tool("in_flight", {})).structured_content != {"result": calls}:
                await asyncio.sleep(0.01)
            started = time.perf_counter()
            process.send_signal(signal.SIGTERM)
            await process.wait()
            took = time.perf_counter() - started
            results = await asyncio.gather(*pending, return_exceptions=True)
        answered = sum(1 for r in results if not isinstance(r, BaseException))
        return took, answered
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", default="0,10,100")
    parser.add_argument("--work", type=float, default=1.0)
    parser.add_argument("--reps", type=int, default=3)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "drain_server.py"
        script.write_text(SERVER)
        print(f"tool work {options.work} s per call; SIGTERM once all calls are held")
        print("calls in flight | SIGTERM -> exit (median of runs, s) | answered")
        for calls in (int(c) for c in options.calls.split(",")):
            runs = [await once(script, calls, options.work) for _ in range(options.reps)]
            times = [t for t, _ in runs]
            answered = min(a for _, a in runs)
            print(f"{calls:>15} | {statistics.median(times):.2f} "
                  f"(min {min(times):.2f}, max {max(times):.2f}) | {answered}/{calls}")  # fmt: skip


if __name__ == "__main__":
    asyncio.run(main())
