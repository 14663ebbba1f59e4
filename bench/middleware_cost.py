"""What each built-in middleware costs per tools/call, counted in instructions (callgrind).

The ASGI app of `app_cost.py` (in process, no sockets; a stateful 2025-11-25 session, JSON
answers) serves `tools/call` one at a time, its server given one built-in (or none, or a
`Middleware` whose one hook only passes on). Instructions per call are the difference of a
long and a short run divided by the difference in calls (start-up cancels out), as in
app_instructions.py; a built-in's cost is its figure less the figure with no middleware.
`cache` is a `ListCache` on a tools/call: what it costs the requests it does not cache.

    .venv/bin/python bench/middleware_cost.py              # every case
    .venv/bin/python bench/middleware_cost.py --only none,masking
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

CASES = ("none", "passthrough", "logging", "timing", "ratelimit", "masking", "timeout", "cache")
SHORT, LONG = 200, 1200  # calls; app_cost.measure runs them twice (warm-up, then counted)


def middleware(case: str) -> list[Any]:
    import logging

    from mcpkit.server import middleware as mw

    class Passthrough(mw.Middleware):
        async def on_call_tool(self, mctx: Any, call_next: Any) -> Any:
            return await call_next(mctx)

    logging.getLogger("mcpkit.requests").setLevel(logging.INFO)  # formatted, to no handler
    made: dict[str, list[Any]] = {
        "none": [],
        "passthrough": [Passthrough()],
        "logging": [mw.RequestLogging()],
        "timing": [mw.RequestTiming()],
        "ratelimit": [mw.RateLimit(1e9, burst=1e9)],
        "masking": [mw.ErrorMasking()],
        "timeout": [mw.ToolTimeout(60)],
        "cache": [mw.ListCache()],
    }
    return made[case]


def run(case: str, calls: int) -> None:
    import app_cost

    from mcpkit import Server

    app_cost.Server = lambda name: Server(name, middleware=middleware(case))  # type: ignore[assignment]
    asyncio.run(app_cost.measure("stateful", 1, calls))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", help="one plain run of a case, no valgrind")
    parser.add_argument("--calls", type=int, default=SHORT)
    parser.add_argument("--only", default=",".join(CASES))
    parser.add_argument("--src", help="a directory holding the mcpkit package to measure")
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).parent))
    if args.run:
        run(args.run, args.calls)
        return
    import callgrind

    program = str(Path(__file__))
    figures: dict[str, float] = {}
    for case in args.only.split(","):
        counts = [
            callgrind.instructions(program, ["--run", case, "--calls", str(n)], args.src)
            for n in (SHORT, LONG)
        ]
        figures[case] = (counts[1] - counts[0]) / (2 * (LONG - SHORT))
        base = figures.get("none")
        extra = "" if base is None or case == "none" else f"  ({figures[case] - base:+,.0f})"
        print(f"  {case:12} {figures[case]:>10,.0f} instructions per call{extra}", flush=True)


if __name__ == "__main__":
    main()
