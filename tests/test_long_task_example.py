"""examples/long_task.py as a real stdio process, driven by our client in both eras: progress
shows as the task's status, the question midway reaches the elicitation handler, the report
comes back."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from mcpkit import Client

EXAMPLE = str(Path(__file__).resolve().parents[1] / "examples" / "long_task.py")


@pytest.mark.parametrize("mode", ["handshake", "2026-07-28"])
async def test_the_long_task_example_reports_progress_and_asks_midway(mode: str) -> None:
    questions: list[str] = []

    async def yes(request: Any) -> dict[str, Any]:
        questions.append(request.message)
        return {"action": "accept", "content": {"charts": True}}

    argv = [sys.executable, EXAMPLE]
    async with Client(argv, mode=mode, elicitation=yes) as client:
        handle = await client.start_tool(
            "build_report", {"topic": "tides", "seconds_per_stage": 0.1}
        )
        messages = [state.status_message async for state in handle]
        result = await handle.result()
    assert result.content[0].text == "Report on tides with charts: 4 stages done."
    assert questions == ["Include charts in the report on tides?"]
    assert any(m and m.endswith("(tides)") for m in messages), messages
