"""How long a SIGTERMed `mcpkit run --transport http` takes to exit with 0, 10 and 100 tool
calls in flight, and whether every one of them got its answer (docs/deploy.md has the
figures). A program you run and read, not a timed test:

    .venv/bin/python bench/drain_time.py [--calls 0,10,100] [--work 1.0] [--reps 3] [--workers N]

Each call runs a tool that sleeps `--work` s; SIGTERM is sent once the server holds all of
them. The time printed is from SIGTERM to the process's exit; what the calls' own remaining
work accounts for is up to `--work` s of it. With `--workers N` (N > 1) the server is
`--workers N --redis URL` on a redis-server this program starts (it must be installed), the
calls spread over the workers, SIGTERM goes to the parent alone (as to a container's PID 1)
and the time is until the parent exits, which it does once every worker has.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx
from scaleout import redis_server

from mcpkit import Client

SERVER = """
import asyncio
import os

from mcpkit import Server

server = Server("drain-bench")
held = []
# with workers, counted where every worker counts
shared = os.environ.get("DRAIN_BENCH_REDIS")


async def count(more: int) -> int:
    if shared is None:
        held.extend([None] * more)
        return len(held)
    import redis.asyncio as redis

    client = redis.Redis.from_url(shared)
    try:
        return int(await client.incrby("drain-bench:held", more))
    finally:
        await client.aclose()


@server.tool()
async def work(seconds: float) -> str:
    await count(1)
    await asyncio.sleep(seconds)
    return "done"


@server.tool()
async def in_flight() -> int:
    return await count(0)
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def once(
    script: Path, calls: int, work: float, workers: int, redis_url: str | None
) -> tuple[float, int]:
    """Seconds from SIGTERM to exit, and how many calls were answered (`redis_url`: the
    workers' Redis when `workers` > 1)."""
    port = free_port()
    argv = [sys.executable, "-m", "mcpkit", "run", str(script), "--transport", "http",
            "--port", str(port), "--drain-timeout", "30"]  # fmt: skip
    env = dict(os.environ)
    if redis_url is not None:
        argv += ["--redis", redis_url, "--workers", str(workers)]
        env["DRAIN_BENCH_REDIS"] = redis_url
        env.setdefault("MCPKIT_REQUEST_STATE_KEYS", "drain-bench-request-state-key")
        await reset(redis_url)
    process = await asyncio.create_subprocess_exec(
        *argv, stderr=asyncio.subprocess.DEVNULL, env=env, start_new_session=True
    )
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
        if process.returncode is None:  # not reaped: the group id is still its own
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)  # its workers too
        await process.wait()


async def reset(redis_url: str) -> None:
    import redis.asyncio as redis

    client = redis.Redis.from_url(redis_url)
    try:
        await client.delete("drain-bench:held")
    finally:
        await client.aclose()


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", default="0,10,100")
    parser.add_argument("--work", type=float, default=1.0)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--workers", type=int, default=1)
    options = parser.parse_args()
    with contextlib.ExitStack() as stack:
        folder = stack.enter_context(tempfile.TemporaryDirectory())
        # scaleout.py's redis-server (an unused port, no persistence): its URL
        redis_url = stack.enter_context(redis_server())[0] if options.workers > 1 else None
        script = Path(folder) / "drain_server.py"
        script.write_text(SERVER)
        print(f"tool work {options.work} s per call; SIGTERM once all calls are held; "
              f"{options.workers} worker process(es)")  # fmt: skip
        print("calls in flight | SIGTERM -> exit (median of runs, s) | answered")
        for calls in (int(c) for c in options.calls.split(",")):
            runs = [
                await once(script, calls, options.work, options.workers, redis_url)
                for _ in range(options.reps)
            ]
            times = [t for t, _ in runs]
            answered = min(a for _, a in runs)
            print(f"{calls:>15} | {statistics.median(times):.2f} "
                  f"(min {min(times):.2f}, max {max(times):.2f}) | {answered}/{calls}")  # fmt: skip


if __name__ == "__main__":
    asyncio.run(main())
