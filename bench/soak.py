"""Soak: minutes of mixed traffic against an mcpkit server over stdio and over Streamable HTTP,
with the server's memory and open files sampled. A program you run and read.

    .venv/bin/python bench/soak.py                     # 10 minutes: 5 stdio, 5 HTTP
    .venv/bin/python bench/soak.py --minutes 2 --only http

Traffic (mcpkit clients, `bench/servers/soak_server.py`): calls that answer at once, slow calls
with progress, slow calls cancelled midway (a client-side timeout cancels them on the server),
resource reads; over HTTP also clients that come and go (a session opened and closed, or just
abandoned, every few seconds) and 2026-07-28 clients beside handshake-era ones.

How to read it: one line per minute with the calls answered, the errors by kind (a
`RequestTimeout` on a call meant to be cancelled is expected and counted apart), latency p50 /
p99 of fast calls, server RSS and open file descriptors. Flat RSS and fds after the first
minute (the warm-up) mean nothing leaks; "lost" must be 0: a request neither answered nor
failed with a reason.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import socket
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from mcpkit import Client
from mcpkit.errors import MCPError, RequestTimeout

SERVER = Path(__file__).resolve().parent / "servers" / "soak_server.py"


@dataclass
class Window:
    answered: int = 0
    cancelled: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    latencies: list[float] = field(default_factory=list)


class Soak:
    def __init__(self) -> None:
        self.window = Window()
        self.sent = 0
        self.settled = 0

    async def one(self, client: Client, rng: random.Random) -> None:
        kind = rng.random()
        self.sent += 1
        began = time.perf_counter()
        try:
            if kind < 0.6:
                a = rng.randrange(10**6)
                result = await client.call_tool("add", {"a": a, "b": 1})
                assert result.structured_content == {"result": a + 1}, result
                self.window.latencies.append(time.perf_counter() - began)
            elif kind < 0.75:
                await client.call_tool("slow", {"seconds": 0.1})
            elif kind < 0.9:
                try:
                    await client.call_tool("slow", {"seconds": 2.0}, timeout=0.1)
                except RequestTimeout:
                    self.window.cancelled += 1
                    return
                self.window.errors["slow call not cancelled"] += 1
                return
            else:
                await client.read_resource("memo://state")
            self.window.answered += 1
        except MCPError as exc:
            self.window.errors[type(exc).__name__] += 1
        finally:
            self.settled += 1

    async def worker(self, connect, until: float, seed: int, churn: bool) -> None:
        rng = random.Random(seed)
        while time.monotonic() < until:
            async with connect() as client:
                calls = rng.randrange(20, 200) if churn else 10**9
                for _ in range(calls):
                    if time.monotonic() >= until:
                        break
                    await asyncio.gather(
                        *(self.one(client, rng) for _ in range(rng.randrange(1, 6)))
                    )


def rss_and_fds(pid: int) -> tuple[float, int]:
    status = Path(f"/proc/{pid}/status").read_text()
    rss = next(line for line in status.splitlines() if line.startswith("VmRSS:"))
    return int(rss.split()[1]) / 1024, len(os.listdir(f"/proc/{pid}/fd"))


def report(minute: int, soak: Soak, pid: int) -> str:
    w, soak.window = soak.window, Window()
    lat = sorted(w.latencies)
    p50 = statistics.median(lat) * 1e3 if lat else 0.0
    p99 = lat[int(len(lat) * 0.99) - 1] * 1e3 if lat else 0.0
    rss, fds = rss_and_fds(pid)
    errors = ", ".join(f"{k} {v}" for k, v in w.errors.items()) or "none"
    return (
        f"  min {minute:2}: {w.answered:7,} answered, {w.cancelled:5,} cancelled as meant, "
        f"errors: {errors}; fast p50 {p50:5.2f} ms p99 {p99:6.2f} ms; "
        f"server RSS {rss:6.1f} MB, {fds} fds"
    )


async def run(transport: str, minutes: float) -> None:
    soak = Soak()
    until = time.monotonic() + minutes * 60
    if transport == "stdio":
        argv = [sys.executable, str(SERVER), "stdio"]
        client = Client(argv, timeout=10)
        await client.__aenter__()
        pid = client._session.transport.process.pid  # type: ignore[union-attr]

        @contextlib.asynccontextmanager
        async def connect():
            yield client

        workers = [soak.worker(connect, until, seed, churn=False) for seed in range(4)]
    else:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        process = await asyncio.create_subprocess_exec(
            sys.executable, str(SERVER), "http", str(port), stderr=asyncio.subprocess.DEVNULL
        )
        pid = process.pid
        await asyncio.sleep(1.5)
        url = f"http://127.0.0.1:{port}/mcp"

        def connect_as(mode: str):
            return lambda: Client(url, mode=mode, timeout=10)

        workers = [
            soak.worker(connect_as("handshake"), until, 1, churn=True),
            soak.worker(connect_as("handshake"), until, 2, churn=True),
            soak.worker(connect_as("2026-07-28"), until, 3, churn=True),
            soak.worker(connect_as("2026-07-28"), until, 4, churn=False),
        ]
    print(f"{transport}: {minutes:g} minutes, server pid {pid}", flush=True)
    rss0, fds0 = rss_and_fds(pid)
    print(f"  start: server RSS {rss0:.1f} MB, {fds0} fds", flush=True)
    tasks = [asyncio.ensure_future(w) for w in workers]
    minute = 0
    while not all(t.done() for t in tasks):
        await asyncio.wait(tasks, timeout=60)
        minute += 1
        print(report(minute, soak, pid), flush=True)
    for task in tasks:
        task.result()
    lost = soak.sent - soak.settled
    print(f"  total: {soak.sent:,} requests, lost {lost}", flush=True)
    if transport == "stdio":
        await client.__aexit__(None, None, None)
    else:
        process.terminate()
        await process.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="in all, split between both")
    parser.add_argument("--only", choices=["stdio", "http"])
    args = parser.parse_args()
    transports = [args.only] if args.only else ["stdio", "http"]
    for transport in transports:
        asyncio.run(run(transport, args.minutes / len(transports)))


if __name__ == "__main__":
    main()
