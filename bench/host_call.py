"""What routing through the Host costs a tool call: `HostTools.call_tool("echo__echo")` against
`Client.call_tool("echo")` on the same stdio echo server, pipelined (32 calls in flight),
interleaved repetitions. Target (issue 17): the host adds at most 10%.

    .venv/bin/python bench/host_call.py                # 5 repetitions of 20,000 calls each
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from mcpkit.host import HostServers, HostTools, load_config

ECHO = str(Path(__file__).resolve().parent / "servers" / "mcpkit_server.py")


async def rate(call: Callable[[], Awaitable[Any]], calls: int, in_flight: int) -> float:
    """Calls per second with `in_flight` workers sharing `calls`."""

    async def worker(count: int) -> None:
        for _ in range(count):
            await call()

    started = time.perf_counter()
    await asyncio.gather(*(worker(calls // in_flight) for _ in range(in_flight)))
    return calls / (time.perf_counter() - started)


async def measure(calls: int, in_flight: int, reps: int) -> tuple[list[float], list[float]]:
    config = load_config({"mcpServers": {"echo": {"command": sys.executable, "args": [ECHO]}}})
    servers = HostServers(config, client_options={"mode": "handshake"})
    await servers.start()
    tools = HostTools(servers)
    await tools.list()
    client = servers.client("echo")
    arguments = {"text": "hi"}

    def bare() -> Awaitable[Any]:
        return client.call_tool("echo", arguments)

    def routed() -> Awaitable[Any]:
        return tools.call_tool("echo__echo", arguments)

    await rate(bare, 2000, in_flight)  # warm up both paths
    await rate(routed, 2000, in_flight)
    plain, hosted = [], []
    for _ in range(reps):
        plain.append(await rate(bare, calls, in_flight))
        hosted.append(await rate(routed, calls, in_flight))
    await servers.aclose()
    return plain, hosted


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--in-flight", type=int, default=32)
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    plain, hosted = asyncio.run(measure(args.calls, args.in_flight, args.reps))
    paired = statistics.median(p / h for p, h in zip(plain, hosted, strict=True))
    print(
        f"bare client {statistics.median(plain):,.0f} calls/s, through the host "
        f"{statistics.median(hosted):,.0f} calls/s ({args.in_flight} in flight): the host "
        f"costs {100 * (paired - 1):+.1f}% (paired median; target <= +10%: "
        f"{'PASS' if paired <= 1.10 else 'FAIL'})"
    )


if __name__ == "__main__":
    main()
