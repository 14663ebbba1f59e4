"""Tasks on the command line: `mcpkit call` follows a tool call the server runs as a task (a
progress line shows its status), and `mcpkit task get|result|cancel TARGET ID` reaches a task
later (over HTTP, or against a server whose tasks live in Redis)."""

from __future__ import annotations

import sys
from typing import Any

from mcpkit.cli.render import ProgressBar, as_json, print_result
from mcpkit.client import Client, Era
from mcpkit.client.tasks import (
    TaskHandle,
    TaskState,
    answered_with_task,
    created_task,
    needs_task_param,
    wire_result,
)
from mcpkit.host.visible import visible

JSONObject = dict[str, Any]


async def call(client: Client, name: str, arguments: JSONObject, bar: ProgressBar) -> JSONObject:
    """tools/call; when the server answers with a task, follow it to its result."""
    if await _must_ask_for_task(client, name):
        handle = await client.start_tool(name, arguments)  # 2025-11-25: asked for
    else:
        params = {"name": name, "arguments": arguments}
        raw = await client.request("tools/call", params, on_progress=bar.update)
        if not answered_with_task(params, raw):
            return raw
        handle = TaskHandle(client, created_task("tools/call", raw))  # 2026-07-28: given
    return await follow(handle, bar)


async def follow(handle: TaskHandle, bar: ProgressBar) -> JSONObject:
    bar.status(f"task {handle.task_id}: {handle.state.status}")  # made visible there
    async for state in handle:
        bar.status(line(state))
    return await wire_result(handle)  # printed as the server sent it


def line(state: TaskState) -> str:
    """One line: the task's id, status and the server's message about it, made visible."""
    text = f"task {state.task_id}: {state.status}"
    return visible(f"{text} - {state.status_message}" if state.status_message else text)


async def _must_ask_for_task(client: Client, name: str) -> bool:
    """A 2025-11-25 server's tool with taskSupport "required" is only callable as a task."""
    if client.era is Era.PER_REQUEST or not client.supports("tasks", "requests", "tools", "call"):
        return False  # no listing needed
    tool = next((t for t in await client.list_all_tools() if t.name == name), None)
    return needs_task_param(client, tool)


async def task_command(client: Client, args: Any) -> int:
    handle = client.task(args.task_id)
    if args.action == "cancel":
        await handle.cancel()
        state = await handle.status()
    elif args.action == "result":
        bar = ProgressBar()
        try:
            result = await follow(handle, bar)
        finally:
            bar.close()
        return print_result(result, args.json)
    else:
        state = await handle.status()
    if args.json:
        as_json(state.raw, sys.stdout)
    else:
        sys.stdout.write(line(state) + "\n")
        for label, value in (("created", state.created_at), ("updated", state.last_updated_at)):
            if value:
                sys.stdout.write(f"  {label}: {visible(str(value))}\n")
    return 0
