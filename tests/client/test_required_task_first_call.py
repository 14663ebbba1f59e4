"""docs/tasks.md: "A 2025-11-25 tool with taskSupport "required" is called with params.task by
itself" holds on a client's very first call, before it has listed the tools (the call waits
for the listing it starts, as it does for the headers of modern HTTP)."""

from __future__ import annotations

import sys
from pathlib import Path

from mcpkit import Client

TASKS = str(Path(__file__).resolve().parents[1] / "fixtures" / "task_server.py")


async def test_the_first_call_of_a_required_task_tool_asks_for_a_task() -> None:
    async with Client([sys.executable, TASKS], mode="handshake") as client:
        assert client.protocol_version == "2025-11-25"
        result = await client.call_tool("nightly", {"name": "db"})  # nothing listed before
        assert result.content[0].text == "nightly db done"  # type: ignore[union-attr]
        assert result.is_error is not True
