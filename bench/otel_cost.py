"""What OpenTelemetry costs per tools/call (mcpkit.telemetry), counted in instructions
(callgrind), in-memory client and server in one process, one call at a time, so both the
client span and the server span are in the figure.

Cases: `none` (no SDK: what every application without OpenTelemetry runs), `sdk` (the SDK's
TracerProvider with a BatchSpanProcessor whose exporter drops the batch, and a MeterProvider
with a reader: spans and the histograms are made, exported nowhere), `off` (the same SDK,
`Server(telemetry=False)` and `Client(telemetry=False)`). Instructions per call are the
difference of a long and a short run over the difference in calls. `--src` measures a copy of
src/ (the code before mcpkit.telemetry: `none` there is the baseline). `--time` prints
microseconds per call instead (wall clock, noisy).

    .venv/bin/python bench/otel_cost.py
    .venv/bin/python bench/otel_cost.py --only none --src /tmp/otelold/src
    .venv/bin/python bench/otel_cost.py --time
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

CASES = ("none", "sdk", "off")
SHORT, LONG = 200, 1200


def set_up_the_sdk() -> None:
    from opentelemetry import metrics, trace
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

    class Dropped(SpanExporter):
        def export(self, spans: Sequence[Any]) -> SpanExportResult:
            return SpanExportResult.SUCCESS

    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(Dropped()))
    trace.set_tracer_provider(provider)
    metrics.set_meter_provider(MeterProvider(metric_readers=[InMemoryMetricReader()]))


async def serve_calls(case: str, calls: int) -> float:
    from mcpkit import Client, Server

    if case != "none":
        set_up_the_sdk()
    options: dict[str, Any] = {"telemetry": False} if case == "off" else {}
    server = Server("bench", **options)

    @server.tool()
    def add(a: int, b: int) -> str:
        return str(a + b)

    params = {"name": "add", "arguments": {"a": 1, "b": 2}}
    async with Client(server, mode="handshake", **options) as client:
        started = time.perf_counter()
        for _ in range(calls):
            await client.request("tools/call", params)
        return (time.perf_counter() - started) / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", help="one plain run of a case, no valgrind")
    parser.add_argument("--calls", type=int, default=SHORT)
    parser.add_argument("--only", default=",".join(CASES))
    parser.add_argument("--src", help="a directory holding the mcpkit package to measure")
    parser.add_argument("--time", action="store_true", help="microseconds per call, 5 runs")
    args = parser.parse_args()
    if args.run:
        print(asyncio.run(serve_calls(args.run, args.calls)))
        return
    if args.time:
        timed(args.only.split(","), args.src)
        return
    sys.path.insert(0, str(Path(__file__).parent))
    import callgrind

    program = str(Path(__file__))
    figures: dict[str, float] = {}
    for case in args.only.split(","):
        counts = [
            callgrind.instructions(program, ["--run", case, "--calls", str(n)], args.src)
            for n in (SHORT, LONG)
        ]
        figures[case] = (counts[1] - counts[0]) / (LONG - SHORT)
        base = figures.get("none")
        extra = "" if base is None or case == "none" else f"  ({figures[case] - base:+,.0f})"
        print(f"  {case:6} {figures[case]:>10,.0f} instructions per call{extra}", flush=True)


def timed(cases: list[str], src: str | None) -> None:
    """Each case in its own process (the SDK is set once per process), best of 5."""
    import os
    import subprocess

    env = dict(os.environ, **({"PYTHONPATH": src} if src else {}))
    for case in cases:
        argv = [sys.executable, __file__, "--run", case, "--calls", "5000"]
        runs = [
            float(subprocess.run(argv, env=env, capture_output=True, text=True, check=True).stdout)
            for _ in range(5)
        ]
        print(f"  {case:6} {min(runs) * 1e6:8.1f} us per call (best of 5)", flush=True)


if __name__ == "__main__":
    main()
