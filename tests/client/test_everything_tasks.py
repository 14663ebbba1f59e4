"""Our client drives the task tools of the npm reference server `server-everything` (2026.8.31,
2025-11-25 tasks over stdio) to completion: `simulate-research-query` must run as a task
(taskSupport "required"), and an ambiguous query asks for a clarification midway, which the
server sends as an elicitation tagged with the task while `tasks/result` waits."""

from __future__ import annotations

from typing import Any

from mcpkit import Client
from tests.peers import node_env, npm_command


def everything(**options: Any) -> Client:
    return Client([*npm_command("mcp-server-everything"), "stdio"], env=node_env(), **options)


async def test_call_tool_runs_a_required_task_tool_to_its_report() -> None:
    async with everything() as client:
        tools = {tool.name: tool for tool in await client.list_all_tools()}
        execution = tools["simulate-research-query"].execution
        assert execution is not None and execution.task_support == "required"
        assert client.supports("tasks", "requests", "tools", "call")
        result = await client.call_tool("simulate-research-query", {"topic": "tides"})
        assert not result.is_error
        assert "# Research Report: tides" in result.content[0].text  # type: ignore[union-attr]


async def test_an_ambiguous_query_asks_the_user_inside_the_task() -> None:
    asked: list[Any] = []

    async def clarify(request: Any) -> dict[str, Any]:
        asked.append(request.to_wire())
        return {"action": "accept", "content": {"interpretation": "snake"}}

    async with everything(elicitation=clarify) as client:
        handle = await client.start_tool(
            "simulate-research-query", {"topic": "python", "ambiguous": True}
        )
        result = await handle.result()
        report = result.content[0].text
        assert "python (snake)" in report
        assert (await handle.status()).status == "completed"
    (question,) = asked
    assert question["_meta"]["io.modelcontextprotocol/related-task"]["taskId"] == handle.task_id


async def test_a_task_on_server_everything_is_cancelled() -> None:
    async with everything() as client:
        handle = await client.start_tool("simulate-research-query", {"topic": "tides"})
        await handle.cancel()
        assert (await handle.status()).status == "cancelled"
