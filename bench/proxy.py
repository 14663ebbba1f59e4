"""tools/call through a proxy over Streamable HTTP to a stdio upstream (issue 25, "Proof").

Systems, measured in the same run, repetitions interleaved (order rotated), medians reported:
  direct   mcpkit.Client -> the upstream over stdio (no proxy; the floor)
  mcpkit   the raw HTTP driver (bench/http_bench.py) -> `mcpkit proxy UPSTREAM --transport http`
  fastmcp  the same driver -> FastMCP 4.1.6 `create_proxy(StdioTransport(UPSTREAM))`, run in
           tests/.venv-fastmcp
Upstreams: the official SDK's stdio echo server (bench/servers/official_server.py, mcp==2.3.0)
and mcpkit's (bench/servers/mcpkit_server.py, the fast one).

Each case opens ONE downstream session (initialize + initialized) and sends calls on it from 1
or 32 keep-alive connections at once (one client, 32 calls in flight; the direct case runs 32
tasks on one Client). Reported: calls/s, p50 and p99 latency, and the proxy process's CPU per
call (from /proc/<pid>/task/*/schedstat; the upstream's CPU is not in it).

    .venv/bin/python bench/proxy.py            # 3 repetitions, ~3 minutes
    .venv/bin/python bench/proxy.py --reps 5 --calls 3000
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import statistics
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))

from common import TEXT, percentile  # noqa: E402
from http_bench import Conn, call_bytes, load, new_session, timed_calls  # noqa: E402

FASTMCP_PYTHON = ROOT / "tests" / ".venv-fastmcp" / "bin" / "python"
OFFICIAL_PYTHON = BENCH / ".venv-official" / "bin" / "python"
UPSTREAMS = {
    "official": [str(OFFICIAL_PYTHON), str(BENCH / "servers" / "official_server.py")],
    "mcpkit": [sys.executable, str(BENCH / "servers" / "mcpkit_server.py")],
}
SYSTEMS = ["direct", "mcpkit", "fastmcp"]
LOGS = BENCH / ".logs"

# FastMCP's proxy as its docs show it: create_proxy on a stdio transport, served over HTTP.
FASTMCP_PROXY = """
import sys
from fastmcp.client.transports import StdioTransport
from fastmcp.server.server import create_proxy
port, command, *args = sys.argv[1:]
proxy = create_proxy(StdioTransport(command=command, args=args))
proxy.run(transport="http", host="127.0.0.1", port=int(port), show_banner=False,
          log_level="warning")
"""


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ProxyProcess:
    """A proxy subprocess listening on a free loopback port, for one measurement."""

    def __init__(self, system: str, upstream: list[str], stderr) -> None:
        self.port = free_port()
        if system == "mcpkit":
            self.argv = [sys.executable, "-m", "mcpkit", "proxy", " ".join(upstream)]
            self.argv += ["--transport", "http", "--port", str(self.port)]
        else:
            self.argv = [str(FASTMCP_PYTHON), "-c", FASTMCP_PROXY, str(self.port), *upstream]
        self.stderr = stderr
        self.proc: asyncio.subprocess.Process | None = None

    async def __aenter__(self) -> ProxyProcess:
        self.proc = await asyncio.create_subprocess_exec(
            *self.argv, stdin=asyncio.subprocess.DEVNULL, stdout=self.stderr, stderr=self.stderr
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.returncode is not None:
                raise RuntimeError(f"proxy exited {self.proc.returncode}")
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", self.port)
                writer.close()
                return self
            except OSError:
                await asyncio.sleep(0.05)
        raise RuntimeError("proxy did not listen within 60 s")

    async def __aexit__(self, *exc: object) -> None:
        assert self.proc is not None
        if self.proc.returncode is None:
            self.proc.terminate()
            try:
                await asyncio.wait_for(self.proc.wait(), 10)
            except TimeoutError:
                self.proc.kill()
                await self.proc.wait()


def unique_ids():
    """The driver numbers each connection's calls from 1; on one shared session the ids
    of calls in flight must differ, so every call gets the next number of one counter."""
    counter = itertools.count(1)
    return lambda conn, session, _ident: call_bytes(conn, session, next(counter))


async def through_proxy(system: str, upstream: list[str], calls: dict[int, int], stderr) -> dict:
    results = {}
    async with ProxyProcess(system, upstream, stderr) as proxy:
        first = await Conn.open(proxy.port)
        session = await new_session(first, stateless=False)
        first.close()
        for concurrency, count in calls.items():
            state = await load(
                proxy.port,
                False,
                concurrency,
                count,
                200,
                handshake=False,
                headers_for=lambda i: {"Mcp-Session-Id": session},
                call=unique_ids(),
            )
            results[concurrency] = await timed_calls(proxy, state)
    return results


async def direct_calls(client, concurrency: int, count: int) -> dict:
    """`count` echo calls from `concurrency` tasks on one Client (after a warmup)."""
    latencies: list[int] = []

    async def worker(n: int, record: bool) -> None:
        for _ in range(n):
            began = time.perf_counter_ns()
            result = await client.call_tool("echo", {"text": TEXT})
            if record:
                latencies.append(time.perf_counter_ns() - began)
            assert result.content[0].text == TEXT

    warmup = max(200 // concurrency, 2)
    await asyncio.gather(*(worker(warmup, False) for _ in range(concurrency)))
    began = time.perf_counter_ns()
    await asyncio.gather(*(worker(count // concurrency, True) for _ in range(concurrency)))
    wall = time.perf_counter_ns() - began
    lat = sorted(latencies)
    return {
        "p50_us": percentile(lat, 50) / 1e3,
        "p99_us": percentile(lat, 99) / 1e3,
        "calls_per_s": len(lat) / (wall / 1e9),
        "server_cpu_us": float("nan"),  # no proxy process
    }


async def direct(upstream: list[str], calls: dict[int, int]) -> dict:
    from mcpkit import Client

    async with Client(upstream, timeout=60) as client:
        return {n: await direct_calls(client, n, count) for n, count in calls.items()}


async def run(reps: int, calls: dict[int, int]) -> dict:
    LOGS.mkdir(exist_ok=True)
    samples: dict[tuple[str, str, int], list[dict]] = {}
    with open(LOGS / "proxy.log", "ab") as stderr:
        for rep in range(reps):
            for name, upstream in UPSTREAMS.items():
                order = SYSTEMS[rep % 3 :] + SYSTEMS[: rep % 3]
                for system in order:
                    print(f"rep {rep + 1}/{reps} {name} upstream: {system}", file=sys.stderr)
                    if system == "direct":
                        found = await direct(upstream, calls)
                    else:
                        found = await through_proxy(system, upstream, calls, stderr)
                    for concurrency, figures in found.items():
                        samples.setdefault((name, system, concurrency), []).append(figures)
    return samples


def med(rows: list[dict], key: str) -> float:
    return statistics.median(row[key] for row in rows)


def report(samples: dict, calls: dict[int, int]) -> None:
    print("| upstream | concurrent | system | calls/s | p50 µs | p99 µs | proxy CPU µs/call |")
    print("|---|---|---|---|---|---|---|")
    for name in UPSTREAMS:
        for concurrency in calls:
            for system in SYSTEMS:
                rows = samples[(name, system, concurrency)]
                cpu = med(rows, "server_cpu_us")
                print(
                    f"| {name} | {concurrency} | {system} | {med(rows, 'calls_per_s'):,.0f} "
                    f"| {med(rows, 'p50_us'):,.0f} | {med(rows, 'p99_us'):,.0f} "
                    f"| {'-' if cpu != cpu else f'{cpu:,.0f}'} |"
                )
    print()
    for name in UPSTREAMS:
        ours = med(samples[(name, "mcpkit", 32)], "calls_per_s")
        theirs = med(samples[(name, "fastmcp", 32)], "calls_per_s")
        p50 = med(samples[(name, "mcpkit", 1)], "p50_us")
        floor = med(samples[(name, "direct", 1)], "p50_us")
        print(
            f"{name} upstream: mcpkit proxy / FastMCP proxy throughput at 32 = {ours / theirs:.1f}x"
            f" (target >= 5x); proxy p50 / direct p50 at 1 = {p50 / floor:.2f}x"
            f" (the hop adds {p50 - floor:,.0f} µs = {(p50 - floor) / floor:.2f}x the direct p50)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--calls", type=int, default=2000, help="measured calls per case")
    args = parser.parse_args()
    calls = {1: args.calls // 2, 32: args.calls}
    samples = asyncio.run(run(args.reps, calls))
    report(samples, calls)


if __name__ == "__main__":
    main()
