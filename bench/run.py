"""Benchmark harness: mcpkit vs the official MCP Python SDK vs a raw asyncio + orjson echo.

    python bench/run.py [--quick] [--only W1,W4] [--reps N] [--json out.json]
    python bench/run.py --only W6,W7    # HTTP workloads: not in the default run
    python bench/run.py --only W8       # HTTP, 2026-07-28 (per-request) tools/call: not default

All systems run in the same invocation, interleaved: each repetition goes through every
workload, mode and system (system order rotated per repetition), so slow drifts of a
noisy machine hit all systems alike. Figures are medians across repetitions. See
bench/README.md for what each workload measures and the targets.
"""

import argparse
import asyncio
import json
import os
import platform
import sys
import time
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
try:
    import orjson  # noqa: F401  (the shared driver needs it)
except ImportError:
    sys.exit("bench/run.py needs orjson: run it with the project venv (.venv/bin/python)")

import http_bench
import systems as systems_mod
from common import Settings
from report import Results, print_report
from workloads import (
    LOGS,
    MODES,
    WORKLOADS,
    MeasurementFailed,
    measure,
    preflight,
    reset_logs,
)


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer calls and repetitions")
    parser.add_argument(
        "--only", default=",".join(WORKLOADS), help="e.g. W1,W2; W6,W7,W8 (HTTP) only when named"
    )
    parser.add_argument("--reps", type=int, help="repetitions (default 5, --quick 2)")
    parser.add_argument("--systems", default=",".join(systems_mod.NAMES), help="subset to run")
    parser.add_argument("--json", type=Path, help="also write every sample to this file")
    args = parser.parse_args()
    args.workloads = [w.strip().upper() for w in args.only.split(",") if w.strip()]
    unknown = set(args.workloads) - set(WORKLOADS) - set(http_bench.HTTP_WORKLOADS)
    if unknown:
        parser.error(f"unknown workload(s): {', '.join(sorted(unknown))}")
    args.system_names = tuple(s.strip() for s in args.systems.split(",") if s.strip())
    args.reps = args.reps or (2 if args.quick else 5)
    return args


async def check_systems(systems: list, results: Results) -> list:
    runnable = []
    for system in systems:
        problem = system.unavailable or await preflight(system)
        if problem:
            results.unavailable[system.name] = problem
            log(f"{system.name}: unavailable ({problem})")
        else:
            runnable.append(system)
    return runnable


def schedule(reps: int, workloads: list[str], runnable: list):
    """Round robin: every repetition visits each workload, mode and system, rotating the
    system order so no system always runs first (or right after a heavy neighbour)."""
    for rep in range(reps):
        shift = rep % max(len(runnable), 1)
        order = runnable[shift:] + runnable[:shift]
        for workload in workloads:
            for mode in MODES:
                for system in order:
                    yield rep, workload, mode, system


async def run_all(args: argparse.Namespace, settings: Settings, results: Results, runnable: list):
    stdio = [w for w in args.workloads if w in WORKLOADS]
    for rep, workload, mode, system in schedule(args.reps, stdio, runnable):
        key = (workload, mode, system.name)
        if key in results.failures:
            continue  # failed before: do not pay for it again
        where = f"[{rep + 1}/{args.reps}] {workload} {mode:6} {system.name:8}"
        began = time.perf_counter()
        try:
            sample = await measure(system, workload, mode, settings)
        except MeasurementFailed as exc:
            results.fail(key, str(exc))
            log(f"{where} FAILED {exc}")
            continue
        results.add(key, sample)
        log(f"{where} {time.perf_counter() - began:5.1f}s {json.dumps(sample)[:100]}")


def header(args: argparse.Namespace, settings: Settings, load_before: float) -> str:
    hs = http_bench.HTTPSettings.quick() if args.quick else http_bench.HTTPSettings()
    return (
        f"mcpkit benchmark: {platform.python_implementation()} {platform.python_version()}, "
        f"{os.cpu_count()} CPUs, {platform.machine()}; {args.reps} interleaved repetitions; "
        f"1-min load average {load_before:.2f} before, {os.getloadavg()[0]:.2f} after\n"
        f"W1 {settings.calls} calls after {settings.warmup} warmup; "
        f"W2 {settings.pipelined_calls} calls, {settings.depth} in flight; "
        f"W3 {settings.spawns} spawns per repetition; "
        f"W4 {settings.model_calls} calls of each tool after {settings.model_warmup} warmup; "
        f"W5 {settings.list_calls} lists after {settings.list_warmup} warmup\n"
        f"W6 {hs.calls_c1} calls at 1 concurrent, {hs.calls_c32} at 32 (W8 {hs.w8_calls_c1} and "
        f"{hs.w8_calls_c32}), after {hs.warmup} warmup; "
        f"W7 {hs.sessions} sessions, then {hs.sessions} GET streams\n"
        f"official = {systems_mod.OFFICIAL_REQUIREMENT} in "
        f"{systems_mod.OFFICIAL_VENV.relative_to(systems_mod.BENCH.parent)}; "
        f"mcpkit and raw = {sys.executable}"
    )


def main() -> None:
    args = parse_args()
    settings = Settings.quick() if args.quick else Settings()
    http_settings = http_bench.HTTPSettings.quick() if args.quick else http_bench.HTTPSettings()
    stdio = [w for w in args.workloads if w in WORKLOADS]
    http = [w for w in args.workloads if w in http_bench.HTTP_WORKLOADS]
    load_before = os.getloadavg()[0]
    results = Results()
    reset_logs()
    systems = systems_mod.build(args.system_names, log=log)
    runnable = asyncio.run(check_systems(systems, results))
    asyncio.run(run_all(args, settings, results, runnable))
    if http:
        run = http_bench.run_http(args.reps, http, runnable, http_settings, results, LOGS, log)
        asyncio.run(run)
    names = [s.name for s in systems]
    if stdio:
        print_report(results, stdio, names, header(args, settings, load_before))
    else:
        print(header(args, settings, load_before))
    if http:
        for line in http_bench.report(results, http, names):
            print(line)
        print("\nTargets (mcpkit, HTTP)")
        for line in http_bench.targets(results, http):
            print(f"  {line}")
    if args.json:
        data = {"settings": asdict(settings), "reps": args.reps, **results.to_json()}
        args.json.write_text(json.dumps(data, indent=2) + "\n")
        log(f"wrote {args.json}")


if __name__ == "__main__":
    main()
