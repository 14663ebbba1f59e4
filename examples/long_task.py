"""A tool that takes a while, run as a task: it reports progress, asks one question midway,
and outlives the request that started it.

    python examples/long_task.py                              # stdio
    python examples/long_task.py 8000                         # Streamable HTTP on 127.0.0.1:8000
    mcpkit call examples/long_task.py build_report topic=tides
    mcpkit task get http://127.0.0.1:8000/mcp TASK_ID         # how far along is it?

A client that declares tasks gets a task back (2026-07-28: the server decides; 2025-11-25:
the client asks with `params.task`) and follows it: `Client.call_tool` does so by itself,
`Client.start_tool` returns a handle to poll, wait on or cancel (docs/tasks.md).
"""

from __future__ import annotations

import asyncio
import sys

from pydantic import BaseModel

from mcpkit import Context, Server

server = Server("long-task", version="1.0.0", instructions="Builds reports; slowly.")
STAGES = ["gathering sources", "reading", "writing", "checking"]


class Charts(BaseModel):
    charts: bool


@server.tool(task=True)
async def build_report(topic: str, ctx: Context, seconds_per_stage: float = 1.0) -> str:
    """Build a report on `topic` (a few seconds; runs as a task for clients that can)."""
    charts = False
    for number, stage in enumerate(STAGES, start=1):
        await ctx.report_progress(number, len(STAGES), f"{stage} ({topic})")
        if stage == "writing":  # one question midway: the task waits for the user
            answer = await ctx.elicit(f"Include charts in the report on {topic}?", Charts)
            charts = answer.action == "accept" and answer.data is not None and answer.data.charts
        await asyncio.sleep(seconds_per_stage)
    extra = " with charts" if charts else ""
    return f"Report on {topic}{extra}: {len(STAGES)} stages done."


if __name__ == "__main__":
    if len(sys.argv) > 1:
        server.run(transport="http", port=int(sys.argv[1]))
    else:
        server.run()
