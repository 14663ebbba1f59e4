"""What the HTTP app costs per tools/call, counted in instructions (callgrind), not time.

`app_cost.py` drives the ASGI app in process (no uvicorn, no sockets) and times it; on this
shared machine time drowns in the load. This runs the same driver under callgrind, one call
at a time, for a stateful 2025-11-25 JSON `tools/call` (`stateful`) and a 2026-07-28
`tools/call` (`per-request`), and prints instructions per call: the difference of a long and a
short run divided by the difference in calls, so interpreter start-up, imports and the
session's opening cancel out. Two versions of the app compare on a busy machine.

    .venv/bin/python bench/app_instructions.py                  # the installed mcpkit (src/)
    .venv/bin/python bench/app_instructions.py --src /tmp/old   # a copy of src/ (mcpkit/...)
"""

from __future__ import annotations

import argparse
from pathlib import Path

import callgrind

PATHS = ("stateful", "per-request")
SHORT, LONG = 200, 1200  # calls; app_cost.measure runs them twice (warm-up, then timed)


def instructions(path: str, calls: int, src: str | None) -> int:
    program = str(Path(__file__).with_name("app_cost.py"))
    arguments = ["--paths", path, "--concurrency", "1", "--reps", "1", "--calls", str(calls)]
    return callgrind.instructions(program, arguments, src)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src", help="a directory holding the mcpkit package to measure")
    parser.add_argument("--paths", default=",".join(PATHS))
    args = parser.parse_args()
    print(f"instructions per tools/call through the ASGI app, {args.src or 'installed mcpkit'}")
    for path in args.paths.split(","):
        short = instructions(path, SHORT, args.src)
        long = instructions(path, LONG, args.src)
        print(f"  {path:10} {(long - short) / (2 * (LONG - SHORT)):>10,.0f}", flush=True)


if __name__ == "__main__":
    main()
