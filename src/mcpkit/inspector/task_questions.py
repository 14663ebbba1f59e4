"""A 2026-07-28 task's questions, put to the person at the page.

At 2026-07-28 a task that waits for its user shows `input_required` with `inputRequests` in
`tasks/get` (no request reaches the client, as it would in the handshake era). Each time the
page reads a task (its Get, or the polling behind its Result), `seen` puts the questions not
asked yet to the person through the client's own handlers (`Client.answer_input`: the same
asks as any elicitation or sampling), then sends the answers with `tasks/update`. Each key is
asked once; a refusal or a failure is reported to the page ("note" event), not asked again.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from mcpkit.client import Client, InputRequired
from mcpkit.errors import MCPError

JSONObject = dict[str, Any]


class TaskQuestions:
    """The task questions put to the person on one connection."""

    def __init__(self, publish: Callable[[JSONObject], None]) -> None:
        self._publish = publish
        self._asked: set[tuple[str, str]] = set()
        self._running: set[asyncio.Task[None]] = set()

    def seen(self, client: Client, task: JSONObject) -> None:
        """A task as `tasks/get` returned it: ask its new questions, if it has any."""
        requests = task.get("inputRequests")
        task_id = task.get("taskId")
        if task.get("status") != "input_required" or type(requests) is not dict:
            return
        if not isinstance(task_id, str):
            return
        fresh = {k: v for k, v in requests.items() if (task_id, k) not in self._asked}
        if not fresh:
            return
        self._asked.update((task_id, key) for key in fresh)
        asked = InputRequired("tasks/get", {"taskId": task_id}, fresh, None, task)
        running = asyncio.create_task(self._answer(client, asked, task_id))
        self._running.add(running)
        running.add_done_callback(self._running.discard)

    async def _answer(self, client: Client, asked: InputRequired, task_id: str) -> None:
        try:
            responses = await client.answer_input(asked)
            await client.request("tasks/update", {"taskId": task_id, "inputResponses": responses})
        except (MCPError, OSError) as exc:
            self._publish({"type": "note", "text": f"task {task_id}: not answered ({exc})"})

    async def close(self) -> None:
        """The connection ends: questions still open are dropped."""
        running, self._running = set(self._running), set()
        self._asked.clear()
        for task in running:
            task.cancel()
        for task in running:
            with contextlib.suppress(asyncio.CancelledError):
                await task
