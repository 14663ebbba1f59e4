"""What each built-in middleware costs per tools/call, counted in instructions (callgrind).

A server with one built-in (or none, or an empty `Middleware` with one hook that only passes
on) serves `tools/call` to an in-memory client, one call at a time; the instructions per call
are the difference of a long and a short run divided by the difference in calls (start-up
cancels out), and each built-in's cost is its figure less the figure with no middleware
(`cache` is tools/list, against `none_list`).

    .venv/bin/python bench/middleware_cost.py              # every case
    .venv/bin/python bench/middleware_cost.py --only none,masking
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

CASES = (
    "none",
    "none_list",
    "passthrough",
    "logging",
    "timing",
    "ratelimit",
    "masking",
    "timeout",
    "cache",
)
SHORT, LONG = 200, 1200


def middleware(case: str) -> list[Any]:
    import logging

    from mcpkit.server import middleware as mw

    class Passthrough(mw.Middleware):
        async def on_call_tool(self, mctx: Any, call_next: Any) -> Any:
            return await call_next(mctx)

    logging.getLogger("mcpkit.requests").setLevel(logging.INFO)  # logged, to no handler
    made = {
        "none": [],
        "none_list": [],
        "passthrough": [Passthrough()],
        "logging": [mw.RequestLogging()],
        "timing": [mw.Timing()],
        "ratelimit": [mw.RateLimit(1e9, burst=1e9)],
        "masking": [mw.ErrorMasking()],
        "timeout": [mw.ToolTimeout(60)],
        "cache": [mw.ListCache()],
    }
    return made[case]


async def serve_calls(case: str, calls: int) -> None:
    from mcpkit import Server
    from mcpkit.testing import connect

    server = Server("bench", middleware=middleware(case))

    @server.tool()
    def add(a: int, b: int) -> str:
        return str(a + b)

    listing = case in ("cache", "none_list")
    method = "tools/list" if listing else "tools/call"
    params = None if listing else {"name": "add", "arguments": {"a": 1, "b": 2}}
    async with connect(server, cache=False) as client:
        for _ in range(calls):
            await client.request(method, params)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", help="one plain run of a case, no valgrind")
    parser.add_argument("--calls", type=int, default=SHORT)
    parser.add_argument("--only", default=",".join(CASES))
    parser.add_argument("--src", help="a directory holding the mcpkit package to measure")
    args = parser.parse_args()
    if args.run:
        asyncio.run(serve_calls(args.run, args.calls))
        return
    sys.path.insert(0, str(Path(__file__).parent))
    import callgrind

    program = str(Path(__file__))
    figures = {}
    for case in args.only.split(","):
        counts = [
            callgrind.instructions(program, ["--run", case, "--calls", str(n)], args.src)
            for n in (SHORT, LONG)
        ]
        figures[case] = (counts[1] - counts[0]) / (LONG - SHORT)
        base = figures.get("none_list" if case == "cache" else "none")
        extra = (
            "" if base is None or case.startswith("none") else f"  ({figures[case] - base:+,.0f})"
        )
        print(f"  {case:12} {figures[case]:>10,.0f} instructions per call{extra}", flush=True)


if __name__ == "__main__":
    main()
