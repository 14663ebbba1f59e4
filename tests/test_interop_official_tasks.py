"""The official SDK's client (`mcp==2.3.0`) against mcpkit's task-capable server over stdio, at
2025-11-25. The SDK has no task API of its own and validates every tools/call answer as a
CallToolResult, so it cannot create a task; it has the 2025-11-25 task types, and validates
every result against that revision's schema. What it can do works: the handshake with our
`tasks` capability, tool definitions with `execution.taskSupport`, an optional task tool called
plainly (an ordinary call), tasks/list and tasks/get through its typed `send_request`."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import pytest

mcp = pytest.importorskip("mcp", reason="the official SDK is a dev dependency")

import mcp.types as types  # noqa: E402
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

pytestmark = pytest.mark.interop

SERVER = StdioServerParameters(
    command=sys.executable, args=[str(Path(__file__).parent / "fixtures" / "task_server.py")]
)


async def test_official_client_drives_a_task_on_our_server() -> None:
    with tempfile.TemporaryFile("w+") as errlog:
        async with (
            stdio_client(SERVER, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            initialized = await session.initialize()
            assert initialized.protocol_version == "2025-11-25"
            tasks = initialized.capabilities.tasks
            assert tasks is not None and tasks.requests is not None
            listed = {tool.name: tool for tool in (await session.list_tools()).tools}
            assert listed["count"].execution is not None
            assert listed["count"].execution.task_support == "optional"

            plain = await session.call_tool("count", {"to": 1})  # no params.task: inline
            assert plain.content[0].text == "counted to 1"  # type: ignore[union-attr]

            # The SDK validates every tools/call answer as a CallToolResult, so it cannot
            # take a CreateTaskResult: it cannot create tasks. What it can send is checked.
            listing = await session.send_request(types.ListTasksRequest(), types.ListTasksResult)
            assert listing.tasks == []
            get = types.GetTaskRequest(params=types.GetTaskRequestParams(task_id="unknown"))
            with pytest.raises(MCPError) as unknown:
                await session.send_request(get, types.GetTaskResult)
            assert unknown.value.error.code == -32602
