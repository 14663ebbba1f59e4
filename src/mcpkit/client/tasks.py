"""Tasks, client side: following a tool call that the server runs as a task, in both eras.

How this works. A `TaskHandle` names one task on one server and knows the era's way to follow
it (the differences live in `mcpkit.protocol.tasks`):

- 2026-07-28: `tasks/get` at the server's `pollIntervalMs` until the task ends; its inlined
  `result` or `error` is the outcome. An `input_required` task lists its `inputRequests`:
  they are answered with the client's own handlers (sampling, elicitation, roots: the same
  ones that answer input_required rounds) and sent with `tasks/update`, each key once.
- 2025-11-25: `tasks/result`, which blocks until the task ends; meanwhile the server's
  questions arrive as ordinary requests (tagged with the task) and the client's handlers
  answer them. `tasks/get` reads the status.

`Client.call_tool` follows a task to its end and returns the `CallToolResult` as it always
did; `Client.start_tool` returns the handle (`status()`, `result()`: the same
`CallToolResult` model, `cancel()`, `async for state in handle`), and `Client.task(task_id)`
makes one again later, in another client or process, for a task the server still holds.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from mcpkit.client.mrtr import InputRequired
from mcpkit.errors import CapabilityNotDeclared, InvalidResult, ProtocolError, TaskCancelled
from mcpkit.protocol.tasks import TERMINAL
from mcpkit.types.eras import Era

if TYPE_CHECKING:
    from mcpkit.types import CallToolResult


class TaskClient(Protocol):
    """What a handle needs of its client (`Client`)."""

    @property
    def era(self) -> Era: ...

    async def request(
        self, method: str, params: JSONObject | None = None, *, timeout: Any = ...
    ) -> JSONObject: ...

    async def answer_input(self, pending: InputRequired) -> JSONObject | None: ...

    def supports(self, *path: str) -> bool: ...


JSONObject = dict[str, Any]
logger = logging.getLogger("mcpkit.client")
DEFAULT_POLL_INTERVAL = 1.0  # seconds, when the server suggests none
MIN_POLL_INTERVAL = 0.05  # never faster, whatever the server suggests


@dataclass(frozen=True, slots=True)
class TaskState:
    """What the server says about a task: its status ("working", "input_required",
    "completed", "failed", "cancelled"), a message for people, times (ISO 8601), the ttl
    and polling pace in ms, and the raw object (2026-07-28: with result / error /
    inputRequests inlined)."""

    task_id: str
    status: str
    status_message: str | None = None
    created_at: str | None = None
    last_updated_at: str | None = None
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None
    raw: JSONObject = field(default_factory=dict)

    @property
    def done(self) -> bool:
        return self.status in TERMINAL

    @classmethod
    def from_wire(cls, raw: JSONObject, method: str = "tasks/get") -> TaskState:
        """Either era's Task object. Raises InvalidResult for one without taskId / status."""
        task_id, status = raw.get("taskId"), raw.get("status")
        if type(task_id) is not str or type(status) is not str:
            raise InvalidResult(method, "a task needs a string taskId and status")
        ttl = raw.get("ttlMs", raw.get("ttl"))
        poll = raw.get("pollIntervalMs", raw.get("pollInterval"))
        return cls(
            task_id=task_id,
            status=status,
            status_message=raw.get("statusMessage"),
            created_at=raw.get("createdAt"),
            last_updated_at=raw.get("lastUpdatedAt"),
            ttl_ms=ttl if type(ttl) is int else None,
            poll_interval_ms=poll if type(poll) is int else None,
            raw=raw,
        )


def answered_with_task(params: JSONObject | None, result: JSONObject) -> bool:
    """Whether a request was answered with a task: `resultType: "task"` (2026-07-28), or a
    `task` object answering a request that asked for one with `params.task` (2025-11-25)."""
    if result.get("resultType") == "task":
        return True
    return params is not None and "task" in params and type(result.get("task")) is dict


def created_task(method: str, result: JSONObject) -> TaskState:
    """The task in a CreateTaskResult of either era ({"task": {...}} or flat)."""
    task = result.get("task")
    raw = task if type(task) is dict else result
    return TaskState.from_wire(raw, method)


class TaskHandle:
    """One task on the server a client talks to (see the module docstring).

    `state` is the last state seen. Iterating (`async for state in handle`) yields each
    new state until the task ends, answering the server's questions on the way.
    """

    def __init__(self, client: TaskClient, state: TaskState, *, result: JSONObject | None = None):
        self._client = client
        self.state = state
        self._result = result  # known at once: a server that answered without a task
        self._answered: set[str] = set()  # input request keys already answered (2026-07-28)

    @classmethod
    def attach(cls, client: TaskClient, task_id: str) -> TaskHandle:
        """A handle on a task known by its id (its state is fetched by `status()`)."""
        return cls(client, TaskState(task_id, "working"))

    @property
    def task_id(self) -> str:
        return self.state.task_id

    def __repr__(self) -> str:
        return f"TaskHandle({self.task_id!r}, {self.state.status!r})"

    async def status(self) -> TaskState:
        """Ask the server now (`tasks/get`). Raises ProtocolError -32602 for a task it does
        not know (unknown, expired, or not this caller's)."""
        if self._result is not None:
            return self.state
        raw = await self._client.request("tasks/get", {"taskId": self.task_id})
        self.state = TaskState.from_wire(raw)
        return self.state

    async def cancel(self) -> None:
        """Ask the server to cancel the task (`tasks/cancel`). A 2025-11-25 server refuses
        a task that has already ended (-32602); a 2026-07-28 one acknowledges it anyway."""
        if self._result is None:
            await self._client.request("tasks/cancel", {"taskId": self.task_id})

    async def result(self, on_state: Callable[[TaskState], Any] | None = None) -> CallToolResult:
        """Wait for the task to end and return the tool's result: a `CallToolResult` model,
        as `call_tool` returns (read as a dict, as before, it still answers for one release,
        with a DeprecationWarning). `on_state` is called with each new state seen on the way
        (2025-11-25: polled with tasks/get while tasks/result waits). Raises ProtocolError
        (the JSON-RPC error the task failed with), TaskCancelled, InvalidResult (an answer
        that is no CallToolResult), and what requests raise."""
        from mcpkit.client.task_result import tool_result

        method = "tasks/get" if self._client.era is Era.PER_REQUEST else "tasks/result"
        return tool_result(await wire_result(self, on_state), method)

    async def _wire_result(self, on_state: Callable[[TaskState], Any] | None) -> JSONObject:
        if self._result is not None:
            return self._result
        if self._client.era is Era.PER_REQUEST:
            async for state in self:
                if on_state is not None:
                    await _call(on_state, state)
            return self._outcome()
        watcher = None
        if on_state is not None:
            watcher = asyncio.get_running_loop().create_task(self._watch(on_state))
        try:
            return await self._client.request(
                "tasks/result", {"taskId": self.task_id}, timeout=None
            )
        except ProtocolError:
            if (await self.status()).status == "cancelled":
                raise TaskCancelled(self.task_id, self.state.status_message) from None
            raise
        finally:
            if watcher is not None:
                watcher.cancel()

    async def _watch(self, on_state: Callable[[TaskState], Any]) -> None:
        try:
            async for state in self:
                await _call(on_state, state)
        except Exception:  # only a view: tasks/result has the last word
            logger.debug("task %s: polling for its states stopped", self.task_id, exc_info=True)

    async def __aiter__(self) -> AsyncIterator[TaskState]:
        if self._result is not None:
            yield self.state
            return
        last: TaskState | None = None
        while True:
            state = await self.status()
            if last is None or (state.status, state.status_message) != (
                last.status,
                last.status_message,
            ):
                yield state
            last = state
            if state.done:
                return
            per_request = self._client.era is Era.PER_REQUEST
            if per_request and state.status == "input_required" and await self._answer(state):
                continue  # look again at once: the answer may have moved it on
            await asyncio.sleep(self._pace(state))

    def _pace(self, state: TaskState) -> float:
        ms = state.poll_interval_ms
        return DEFAULT_POLL_INTERVAL if ms is None else max(ms / 1000, MIN_POLL_INTERVAL)

    async def _answer(self, state: TaskState) -> bool:
        """Answer the input requests not answered yet (each key once); True if any."""
        requests = state.raw.get("inputRequests")
        if type(requests) is not dict:
            return False
        fresh = {k: v for k, v in requests.items() if k not in self._answered}
        if not fresh:
            return False
        asked = InputRequired("tasks/get", {"taskId": self.task_id}, fresh, None, state.raw)
        responses = await self._client.answer_input(asked)
        self._answered.update(fresh)
        await self._client.request(
            "tasks/update", {"taskId": self.task_id, "inputResponses": responses}
        )
        return True

    def _outcome(self) -> JSONObject:
        state = self.state
        if state.status == "completed":
            result = state.raw.get("result")
            if type(result) is not dict:
                raise InvalidResult("tasks/get", "a completed task carries no result object")
            return result
        if state.status == "failed":
            error = state.raw.get("error")
            if type(error) is dict and type(error.get("code")) is int:
                raise ProtocolError(error["code"], str(error.get("message")), error.get("data"))
            raise ProtocolError(-32603, state.status_message or "the task failed")
        raise TaskCancelled(self.task_id, state.status_message)


async def wire_result(
    handle: TaskHandle, on_state: Callable[[TaskState], Any] | None = None
) -> JSONObject:
    """`handle.result()` as the server sent it (a dict): for the client, which parses it
    into the model its caller asked for, once."""
    return await handle._wire_result(on_state)


async def _call(callback: Callable[[TaskState], Any], state: TaskState) -> None:
    outcome = callback(state)
    if inspect.isawaitable(outcome):
        await outcome


def needs_task_param(client: TaskClient, tool: Any) -> bool:
    """Whether a call to `tool` (a listed `Tool`, or None) must ask for a task: a 2025-11-25
    server's tool with taskSupport "required" is callable only with `params.task`."""
    execution = None if tool is None else tool.execution
    if execution is None or execution.task_support != "required":
        return False  # the common case, decided without looking at capabilities
    return client.era is Era.HANDSHAKE and client.supports("tasks", "requests", "tools", "call")


async def start_tool(
    client: TaskClient, name: str, arguments: JSONObject, ttl: float | None
) -> TaskHandle:
    """`Client.start_tool` (see there)."""
    params: JSONObject = {"name": name, "arguments": arguments}
    if client.era is Era.HANDSHAKE:
        if not client.supports("tasks", "requests", "tools", "call"):
            raise CapabilityNotDeclared(
                "tools/call as a task", ("tasks", "requests", "tools", "call"), "server"
            )
        params["task"] = {} if ttl is None else {"ttl": round(ttl * 1000)}
    raw = await client.request("tools/call", params)
    if answered_with_task(params, raw):
        return TaskHandle(client, created_task("tools/call", raw))
    done = TaskState("", "completed", raw={"result": raw})
    return TaskHandle(client, done, result=raw)
