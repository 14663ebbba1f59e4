"""Scale-out cost (issue 24): a stateful JSON `tools/call` (echo, 2025-11-25 session) at 32
concurrent through haproxy (examples/deploy/haproxy.cfg, round robin, no stickiness), for

    in-process   1 worker, the default in-process state (LocalState)
    redis x1     1 worker, RedisState
    redis x2     2 workers, RedisState (one Redis)
    redis x3     3 workers, RedisState
    sticky x2/x3 2 and 3 workers, in-process state, haproxy keeping each session on the worker
                 that made it: the same processes on the same cores without shared state, so
                 "redis xN vs sticky xN" is the cost of sharing, apart from the cost of N
                 processes on this machine's cores
    official     the official SDK's stateful JSON server (mcp==2.3.0), 1 worker: the usual
                 comparison (it has no shared state, so no more workers)

and at 1 concurrent straight to the single worker (no haproxy) for the latency figure.

    .venv/bin/python bench/scaleout.py [--quick] [--reps N] [--no-official] [--json out.json]
    .venv/bin/python bench/scaleout.py --aof --only "in-process,redis x1"   # Redis with an AOF

CPU per call is read from /proc/<pid>/task/*/schedstat (every thread, ns) of the worker
processes, redis-server and haproxy, before and after the measured calls. The figures that
carry to bigger machines are these CPU costs: on a 2-core machine throughput cannot grow with
workers (driver, haproxy, Redis and the workers share the cores). Each repetition visits every
configuration (order rotated), each with freshly started workers and haproxy; figures are
medians across repetitions. Redis runs without persistence (--save "" --appendonly no), or
with an append-only file fsynced every second (--aof).

A worker is this file run as `scaleout.py --worker PORT [REDIS_URL]`: the W6 echo server
(servers/mcpkit_http.py) on uvicorn, asyncio loop, httptools, response_mode="json". The
servers' own output goes to bench/.logs/scaleout.log.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import secrets
import shutil
import socket
import statistics
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from common import percentile  # noqa: E402
from http_bench import load, server_cpu_ns, together  # noqa: E402
from systems import OFFICIAL_REQUIREMENT, SERVERS, ensure_official_venv  # noqa: E402

LOGS = BENCH / ".logs"
HAPROXY_EXAMPLE = BENCH.parent / "examples" / "deploy" / "haproxy.cfg"
HOST = "127.0.0.1"
CPU_TARGET = 1.3  # Redis state's CPU per call (workers + Redis) over the in-process state's
# Workers sharing a state must seal 2026-07-28 requestState with the same keys (docs/deploy.md)
REQUEST_STATE_KEY = secrets.token_urlsafe(32)
P50_TARGET_US = 150.0  # Redis state's p50 over the in-process state's, 1 worker, 1 concurrent


@dataclass(frozen=True)
class Config:
    name: str
    workers: int
    redis: bool
    official: bool = False
    sticky: bool = False  # haproxy keeps each session on the worker that made it


CONFIGS = [
    Config("in-process", 1, False),
    Config("redis x1", 1, True),
    Config("redis x2", 2, True),
    Config("redis x3", 3, True),
    Config("sticky x2", 2, False, sticky=True),
    Config("sticky x3", 3, False, sticky=True),
    Config("official", 1, False, official=True),
]
LATENCY_CONFIGS = ("in-process", "redis x1", "official")  # also measured at 1 concurrent


@dataclass(frozen=True)
class Settings:
    calls_c32: int = 16000
    calls_c1: int = 3000
    warmup: int = 400
    reps: int = 5

    @classmethod
    def quick(cls) -> Settings:
        return cls(calls_c32=4000, calls_c1=800, warmup=200, reps=2)


@dataclass
class Samples:
    """Every repetition's figures of one configuration."""

    c32: list[dict[str, float]] = field(default_factory=list)
    c1: list[dict[str, float]] = field(default_factory=list)


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port


# --- the processes -----------------------------------------------------------------------


async def listening(proc: asyncio.subprocess.Process, port: int, what: str) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.returncode is not None:
            raise RuntimeError(f"{what} exited {proc.returncode}")
        try:
            _, writer = await asyncio.open_connection(HOST, port)
            writer.close()
            return
        except OSError:
            await asyncio.sleep(0.05)
    raise RuntimeError(f"{what} did not listen within 30 s")


@contextlib.asynccontextmanager
async def started(argv: list[str], port: int, what: str, env=None) -> AsyncIterator[int]:
    """Run `argv` until the block ends (terminate, then kill); yields its pid once `port`
    accepts connections."""
    LOGS.mkdir(exist_ok=True)
    with (LOGS / "scaleout.log").open("ab") as output:  # the servers' own logging
        proc = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.DEVNULL, stdout=output, stderr=output, env=env
        )
    try:
        await listening(proc, port, what)
        yield proc.pid
    finally:
        if proc.returncode is None:
            proc.terminate()
            try:
                await asyncio.wait_for(proc.wait(), 10)
            except TimeoutError:
                proc.kill()
                await proc.wait()


def worker_argv(config: Config, port: int, redis_url: str) -> list[str]:
    if config.official:
        python = str(ensure_official_venv(log))
        return [python, str(SERVERS / "official_http.py"), "json", str(port)]
    more = [redis_url] if config.redis else []
    return [sys.executable, __file__, "--worker", str(port), *more]


STICKY = """\
    stick-table type string len 64 size 100k expire 30m
    stick store-response res.hdr(mcp-session-id)
    stick match req.hdr(mcp-session-id)"""


def haproxy_config(
    port: int, workers: list[int], sticky: bool = False, readiness: bool = True
) -> str:
    """examples/deploy/haproxy.cfg with its listening address and one `server` line per
    worker (`sticky`: each session kept on the worker that made it, learned from its
    Mcp-Session-Id; not `readiness`: no HTTP check of /readyz, for a server without one,
    the official SDK's)."""
    dropped = ("server w",) if readiness else ("server w", "option httpchk", "http-check")
    lines = [
        line
        for line in HAPROXY_EXAMPLE.read_text().splitlines()
        if not line.strip().startswith(dropped)
    ]
    text = "\n".join(lines).replace('"${MCP_BIND-127.0.0.1:8000}"', f"{HOST}:{port}")
    servers = [f"    server w{i} {HOST}:{p}" for i, p in enumerate(workers, 1)]
    if sticky:
        servers.insert(0, STICKY)
    return text + "\n" + "\n".join(servers) + "\n"


@dataclass
class Running:
    port: int  # haproxy's
    workers: list[tuple[int, int]]  # (port, pid)
    haproxy_pid: int


@contextlib.asynccontextmanager
async def cluster(config: Config, redis_url: str, haproxy: str) -> AsyncIterator[Running]:
    async with contextlib.AsyncExitStack() as stack:
        workers = []
        env = dict(os.environ, MCPKIT_REQUEST_STATE_KEYS=REQUEST_STATE_KEY)
        for _ in range(config.workers):
            port = free_port()
            argv = worker_argv(config, port, redis_url)
            pid = await stack.enter_async_context(started(argv, port, config.name, env))
            workers.append((port, pid))
        port = free_port()
        path = Path(f"/tmp/mcpkit-bench-haproxy-{port}.cfg")
        ports = [p for p, _ in workers]
        path.write_text(haproxy_config(port, ports, config.sticky, not config.official))
        stack.callback(path.unlink, missing_ok=True)
        argv = [haproxy, "-db", "-f", str(path)]
        haproxy_pid = await stack.enter_async_context(started(argv, port, "haproxy"))
        yield Running(port, workers, haproxy_pid)


# --- Redis ---------------------------------------------------------------------------------


@contextlib.contextmanager
def redis_server(aof: bool = False):
    """A redis-server on an unused port, without persistence or (`aof`) with an append-only
    file fsynced every second: (URL, pid, port)."""
    import subprocess
    import tempfile

    binary = shutil.which("redis-server")
    if binary is None:
        sys.exit("bench/scaleout.py needs redis-server: run `bash scripts/system-packages.sh`")
    port = free_port()
    argv = [binary, "--port", str(port), "--bind", HOST, "--save", ""]
    with tempfile.TemporaryDirectory() as folder:
        if aof:
            argv += ["--dir", folder, "--appendonly", "yes", "--appendfsync", "everysec"]
        else:
            argv += ["--appendonly", "no"]
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 10
            while commands_processed(port) is None:
                if time.monotonic() > deadline:
                    raise RuntimeError("redis-server did not start")
                time.sleep(0.05)
            yield f"redis://{HOST}:{port}/0", proc.pid, port
        finally:
            proc.terminate()
            proc.wait(10)


def commands_processed(port: int) -> int | None:
    """Redis's total_commands_processed (INFO stats), None when it does not answer."""
    try:
        with socket.create_connection((HOST, port), 1) as sock:
            sock.sendall(b"INFO stats\r\n")
            data = b""
            while b"total_commands_processed" not in data or not data.endswith(b"\r\n"):
                chunk = sock.recv(65536)
                if not chunk:
                    break
                data += chunk
    except OSError:
        return None
    for line in data.decode().splitlines():
        if line.startswith("total_commands_processed:"):
            return int(line.split(":")[1])
    return None


# --- measuring -----------------------------------------------------------------------------


async def timed(state: dict, pids: dict[str, list[int]], redis_port: int | None) -> dict:
    """Run a `load` state's measured calls: latency, calls/s and CPU per call of each group of
    processes in `pids` (µs), Redis commands per call."""
    conns, sessions, worker = state["conns"], state["sessions"], state["worker"]
    before = {name: sum(server_cpu_ns(p) for p in group) for name, group in pids.items()}
    commands = commands_processed(redis_port) if redis_port else None
    driver = time.process_time_ns()
    began = time.perf_counter_ns()
    await together(worker(c, s, state["share"], True) for c, s in zip(conns, sessions, strict=True))
    wall = time.perf_counter_ns() - began
    driver = time.process_time_ns() - driver
    after = {name: sum(server_cpu_ns(p) for p in group) for name, group in pids.items()}
    for conn in conns:
        conn.close()
    latencies = sorted(state["latencies"])
    n = len(latencies)
    figures = {
        "calls_per_s": n / (wall / 1e9),
        "p50_us": percentile(latencies, 50) / 1e3,
        "p99_us": percentile(latencies, 99) / 1e3,
        "driver_cpu_us": driver / n / 1e3,
    }
    for name in pids:
        figures[f"{name}_cpu_us"] = (after[name] - before[name]) / n / 1e3
    if redis_port and commands is not None:
        figures["redis_commands"] = ((commands_processed(redis_port) or 0) - commands - 1) / n
    return figures


async def measure(
    config: Config, settings: Settings, redis: tuple[str, int, int], haproxy: str
) -> tuple[dict, dict | None]:
    """One repetition of `config`: 32 concurrent through haproxy, and (for the one-worker
    latency configurations) 1 concurrent straight to the worker."""
    redis_url, redis_pid, redis_port = redis
    async with cluster(config, redis_url, haproxy) as running:
        worker_pids = [pid for _, pid in running.workers]
        pids = {"workers": worker_pids, "redis": [redis_pid], "haproxy": [running.haproxy_pid]}
        pids |= {f"w{i}": [pid] for i, pid in enumerate(worker_pids, 1)}
        state = await load(running.port, False, 32, settings.calls_c32, settings.warmup)
        c32 = await timed(state, pids, redis_port if config.redis else None)
        c1 = None
        if config.name in LATENCY_CONFIGS:
            port, pid = running.workers[0]
            state = await load(port, False, 1, settings.calls_c1, settings.warmup)
            c1 = await timed(state, {"workers": [pid], "redis": [redis_pid]}, None)
        return c32, c1


async def run(
    settings: Settings, configs: list[Config], haproxy: str, aof: bool
) -> dict[str, Samples]:
    results = {config.name: Samples() for config in configs}
    with redis_server(aof) as redis:
        for rep in range(settings.reps):
            shift = rep % len(configs)
            for config in configs[shift:] + configs[:shift]:
                began = time.perf_counter()
                c32, c1 = await measure(config, settings, redis, haproxy)
                results[config.name].c32.append(c32)
                if c1 is not None:
                    results[config.name].c1.append(c1)
                log(
                    f"[{rep + 1}/{settings.reps}] {config.name:10} "
                    f"{time.perf_counter() - began:5.1f}s c32 {c32['calls_per_s']:8,.0f}/s "
                    f"workers {c32['workers_cpu_us']:6.1f} us redis {c32['redis_cpu_us']:5.1f} us"
                    + (f"; c1 p50 {c1['p50_us']:6.0f} us" if c1 else "")
                )
    return results


# --- the report ----------------------------------------------------------------------------


def med(samples: list[dict[str, float]], key: str) -> float:
    return statistics.median(s[key] for s in samples)


def per_call(samples: list[dict[str, float]]) -> float:
    """CPU per call of the workers and Redis together (what a deployment pays), median."""
    return statistics.median(s["workers_cpu_us"] + s["redis_cpu_us"] for s in samples)


def report(results: dict[str, Samples], settings: Settings, aof: bool) -> list[str]:
    lines = [
        f"Scale-out: stateful JSON tools/call echo, {platform.python_implementation()} "
        f"{platform.python_version()}, {os.cpu_count()} CPUs; {settings.reps} interleaved "
        f"repetitions, medians; load average {os.getloadavg()[0]:.2f} at the end",
        f"Redis {'appendonly yes, appendfsync everysec' if aof else 'without persistence'}; "
        f"32 concurrent through haproxy (examples/deploy/haproxy.cfg), {settings.calls_c32} "
        f"calls after {settings.warmup} warmup; CPU in us per call; cmds: Redis commands per "
        f"call (INFO stats; a script's own commands count too: one EVALSHA is 5)",
        "",
        f"  {'':12}{'calls/s':>9}{'p50 us':>9}{'p99 us':>9}{'workers':>9}{'redis':>7}"
        f"{'w+r':>8}{'haproxy':>9}{'driver':>8}{'cmds':>6}  per-worker CPU split",
    ]
    for name, samples in results.items():
        rows = samples.c32
        split = [k for k in rows[0] if k[0] == "w" and k[1:].split("_")[0].isdigit()]
        shares = " / ".join(f"{med(rows, k):.1f}" for k in split) if len(split) > 1 else "-"
        commands = (
            f"{med(rows, 'redis_commands'):6.2f}" if "redis_commands" in rows[0] else "     -"
        )
        lines.append(
            f"  {name:12}{med(rows, 'calls_per_s'):9,.0f}{med(rows, 'p50_us'):9,.0f}"
            f"{med(rows, 'p99_us'):9,.0f}{med(rows, 'workers_cpu_us'):9.1f}"
            f"{med(rows, 'redis_cpu_us'):7.1f}{per_call(rows):8.1f}"
            f"{med(rows, 'haproxy_cpu_us'):9.1f}{med(rows, 'driver_cpu_us'):8.1f}"
            f"{commands}  {shares}"
        )
    lines += ["", f"1 concurrent straight to the worker (no haproxy), {settings.calls_c1} calls"]
    lines.append(f"  {'':12}{'p50 us':>9}{'p99 us':>9}{'calls/s':>9}{'worker':>9}{'redis':>7}")
    for name, samples in results.items():
        if samples.c1:
            rows = samples.c1
            lines.append(
                f"  {name:12}{med(rows, 'p50_us'):9,.0f}{med(rows, 'p99_us'):9,.0f}"
                f"{med(rows, 'calls_per_s'):9,.0f}{med(rows, 'workers_cpu_us'):9.1f}"
                f"{med(rows, 'redis_cpu_us'):7.1f}"
            )
    return [*lines, "", "Targets", *targets(results)]


def targets(results: dict[str, Samples]) -> list[str]:
    if "in-process" not in results:
        return ["  in-process not measured: no ratios"]
    base = results["in-process"]
    lines = []
    for name in ("redis x1", "redis x2", "redis x3"):
        if name in results:
            ratio = per_call(results[name].c32) / per_call(base.c32)
            verdict = "PASS" if ratio <= CPU_TARGET else "FAIL"
            lines.append(
                f"  {verdict}  CPU per call (workers + Redis), {name} vs in-process <= "
                f"{CPU_TARGET}x  (measured {ratio:.2f}x)"
            )
    for count in (2, 3):  # the same number of processes, sessions kept apart by haproxy
        name, base_n = f"redis x{count}", f"sticky x{count}"
        if name in results and base_n in results:
            ratio = per_call(results[name].c32) / per_call(results[base_n].c32)
            verdict = "PASS" if ratio <= CPU_TARGET else "FAIL"
            lines.append(
                f"  {verdict}  CPU per call (workers + Redis), {name} vs {base_n} (in-process "
                f"state, sticky sessions) <= {CPU_TARGET}x  (measured {ratio:.2f}x)"
            )
    if "redis x1" in results:
        ones = per_call(results["redis x1"].c32)
        for name in ("redis x2", "redis x3"):
            if name in results:
                commands = [med(results[n].c32, "redis_commands") for n in ("redis x1", name)]
                lines.append(
                    f"  info  adding workers: {name} vs redis x1 CPU per call "
                    f"{per_call(results[name].c32) / ones:.2f}x, Redis commands per call "
                    f"{commands[1]:.2f} vs {commands[0]:.2f}"
                )
        delta = med(results["redis x1"].c1, "p50_us") - med(base.c1, "p50_us")
        verdict = "PASS" if delta <= P50_TARGET_US else "FAIL"
        lines.append(
            f"  {verdict}  p50 at 1 concurrent, redis x1 - in-process <= +{P50_TARGET_US:.0f} us"
            f"  (measured {delta:+.0f} us)"
        )
        redis_us = med(results["redis x1"].c32, "redis_cpu_us")
        worker_us = med(results["redis x1"].c32, "workers_cpu_us")
        lines.append(
            f"  info  one Redis core per {worker_us / redis_us:.1f} worker cores at this call "
            f"(worker {worker_us:.1f} us, Redis {redis_us:.1f} us per call)"
        )
    if "official" in results and "redis x1" in results:
        ratio = per_call(results["official"].c32) / per_call(results["redis x1"].c32)
        lines.append(
            f"  info  official ({OFFICIAL_REQUIREMENT}) CPU per call vs redis x1: {ratio:.1f}x"
        )
    return lines


# --- the worker ----------------------------------------------------------------------------


def serve_worker(port: int, redis_url: str | None) -> None:
    """One worker: servers/mcpkit_http.py's echo server, JSON answers, in-process or Redis."""
    import uvicorn

    sys.path.insert(0, str(SERVERS))
    from mcpkit_http import HTTP_PARSER, server

    if redis_url:
        from mcpkit.transports.http.redis_state import RedisState

        app = server.http_app(response_mode="json", state=RedisState(redis_url))
    else:
        app = server.http_app(response_mode="json")
    uvicorn.run(app, host=HOST, port=port, loop="asyncio", http=HTTP_PARSER, log_level="warning")


def main() -> None:
    if sys.argv[1:2] == ["--worker"]:
        serve_worker(int(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else None)
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer calls and repetitions")
    parser.add_argument("--reps", type=int, help="repetitions (default 5, --quick 2)")
    parser.add_argument("--no-official", action="store_true", help="skip the official SDK")
    parser.add_argument("--json", type=Path, help="also write every sample to this file")
    parser.add_argument(
        "--aof", action="store_true", help="Redis with appendonly yes, appendfsync everysec"
    )
    parser.add_argument(
        "--only", help="configurations, comma-separated (e.g. 'in-process,redis x1')"
    )
    args = parser.parse_args()
    settings = Settings.quick() if args.quick else Settings()
    if args.reps:
        settings = Settings(settings.calls_c32, settings.calls_c1, settings.warmup, args.reps)
    haproxy = shutil.which("haproxy") or "/usr/sbin/haproxy"
    if not os.path.exists(haproxy):
        sys.exit("bench/scaleout.py needs haproxy: run `bash scripts/system-packages.sh`")
    configs = [c for c in CONFIGS if not (c.official and args.no_official)]
    if args.only:
        configs = [c for c in configs if c.name in args.only.split(",")]
    results = asyncio.run(run(settings, configs, haproxy, args.aof))
    for line in report(results, settings, args.aof):
        print(line)
    if args.json:
        data = {"settings": asdict(settings), **{k: asdict(v) for k, v in results.items()}}
        args.json.write_text(json.dumps(data, indent=2) + "\n")
        log(f"wrote {args.json}")


if __name__ == "__main__":
    main()
