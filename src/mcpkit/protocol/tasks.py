"""Tasks on the wire, in both shapes: the 2025-11-25 utility and the 2026-07-28 extension.

How this works. A task is one record (see `mcpkit.stores.tasks.TaskRecord`); the two eras show
it differently, and this module holds every difference so the server and the client never
spell a field by hand:

- 2025-11-25: a task-augmented request carries `params.task` ({"ttl": ms}); the answer is
  `{"task": {...}}`; `ttl` / `pollInterval`; the result comes from `tasks/result`, which
  blocks until the task ends and carries the `related-task` `_meta`; `tasks/list` exists;
  the `tasks` capability says which requests may be augmented. A tool result with `isError`
  makes the task `failed`.
- 2026-07-28 (`io.modelcontextprotocol/tasks`): the server decides, for a client whose
  request declared the extension; the answer is the flat task with `resultType: "task"`;
  `ttlMs` / `pollIntervalMs`; `tasks/get` inlines `result`, `error` or `inputRequests`;
  `tasks/update` answers input requests; no `tasks/result`, no `tasks/list`. A tool result
  with `isError` is `completed` (only a JSON-RPC error is `failed`).
"""

from __future__ import annotations

from datetime import UTC, datetime
from functools import lru_cache
from typing import Any, Final, Literal, Protocol

from mcpkit.errors import ProtocolError
from mcpkit.protocol.lifecycle import handshake_extensions
from mcpkit.protocol.per_request import missing_capability
from mcpkit.types.methods import MethodInfo

JSONObject = dict[str, Any]
TaskStatus = Literal["working", "input_required", "completed", "failed", "cancelled"]

EXTENSION: Final = "io.modelcontextprotocol/tasks"
RELATED_TASK: Final = "io.modelcontextprotocol/related-task"
TERMINAL: Final = frozenset({"completed", "failed", "cancelled"})
# The methods of the 2026-07-28 extension (served when the server declares it).
PER_REQUEST_TASK_METHODS: Final = frozenset({"tasks/get", "tasks/update", "tasks/cancel"})
# What the rules know of them (no revision of the core schema has them).
EXTENSION_METHODS: Final = {
    method: MethodInfo(
        method=method,
        kind="request",
        direction="client_to_server",
        params_type=None,
        result_type=None,
        capability=None,
        revisions=frozenset({"2026-07-28"}),
    )
    for method in sorted(PER_REQUEST_TASK_METHODS)
}
# Requests a task may wrap (both eras).
AUGMENTABLE: Final = frozenset({"tools/call"})


def declares_extension(capabilities: JSONObject | None) -> bool:
    """Whether (2026-07-28) client or server capabilities declare the tasks extension."""
    if capabilities is None:
        return False
    extensions = capabilities.get("extensions")
    return type(extensions) is dict and type(extensions.get(EXTENSION)) is dict


def extension_required() -> ProtocolError:
    """-32021 naming the tasks extension: the request needed it and did not declare it."""
    return missing_capability({"extensions": {EXTENSION: {}}})


def per_request_capabilities(capabilities: JSONObject) -> JSONObject:
    """A server's capabilities as 2026-07-28 shapes them: the handshake-era `tasks` slot
    becomes the tasks extension (the conformance suite checks that no `tasks` slot is left)."""
    if "tasks" not in capabilities:
        return capabilities
    shaped = {k: v for k, v in capabilities.items() if k != "tasks"}
    extensions = dict(shaped.get("extensions") or {})
    extensions[EXTENSION] = {}
    shaped["extensions"] = extensions
    return shaped


def handshake_capabilities(capabilities: JSONObject) -> JSONObject:
    """A server's capabilities for an initialize answer: of `extensions`, only those
    negotiated in a handshake too (MCP Apps; the tasks extension is 2026-07-28 only)."""
    return handshake_extensions(capabilities)


def requested_ttl(params: JSONObject | None) -> int | bool | None:
    """The ttl (ms) a 2025-11-25 request asked for in `params.task`: an int, None (a task
    without a ttl), or False when the request is not task-augmented. Raises ValueError for a
    `task` that is not an object or a ttl that is not a non-negative integer."""
    if params is None or "task" not in params:
        return False
    task = params["task"]
    if type(task) is not dict:
        raise ValueError('params.task must be an object ({} or {"ttl": milliseconds})')
    ttl = task.get("ttl")
    if ttl is None:
        return None
    if type(ttl) is not int or ttl < 0:
        raise ValueError("params.task.ttl must be a non-negative integer (milliseconds)")
    return ttl


def related_meta(task_id: str) -> JSONObject:
    """The `_meta` entry that ties a message to its task (2025-11-25)."""
    return {RELATED_TASK: {"taskId": task_id}}


def with_related(result: JSONObject, task_id: str) -> JSONObject:
    """`result` with the related-task `_meta` added (a 2025-11-25 tasks/result answer)."""
    meta = result.get("_meta")
    merged = {**meta, **related_meta(task_id)} if type(meta) is dict else related_meta(task_id)
    return {**result, "_meta": merged}


def without_related(result: JSONObject) -> JSONObject:
    """`result` without the related-task `_meta` (a 2026-07-28 inlined result)."""
    meta = result.get("_meta")
    if type(meta) is not dict or RELATED_TASK not in meta:
        return result
    rest = {k: v for k, v in meta.items() if k != RELATED_TASK}
    shaped = {k: v for k, v in result.items() if k != "_meta"}
    if rest:
        shaped["_meta"] = rest
    return shaped


def task_id_of(params: JSONObject | None) -> str:
    """`params.taskId` of a tasks/* request. Raises ValueError when it is not a string."""
    task_id = None if params is None else params.get("taskId")
    if type(task_id) is not str:
        raise ValueError("params.taskId must be a string")
    return task_id


class TaskView(Protocol):
    """What the wire shows of a stored task (`mcpkit.stores.tasks.TaskRecord`)."""

    task_id: str
    status: str
    status_message: str | None
    created_at: float
    updated_at: float
    ttl_ms: int | None
    poll_interval_ms: int | None
    result: JSONObject | None
    error: JSONObject | None
    input_requests: JSONObject | None


@lru_cache(maxsize=4096)  # a task's createdAt is shown at every poll
def timestamp(seconds: float) -> str:
    """ISO 8601 (RFC 3339) in UTC, to the millisecond."""
    moment = datetime.fromtimestamp(seconds, UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def task_wire(task: TaskView, *, per_request: bool, detailed: bool = False) -> JSONObject:
    """The task as `Task` (2025-11-25) or, `per_request`, as the extension's Task; `detailed`
    (2026-07-28 tasks/get and notifications) adds the result, error or input requests."""
    out: JSONObject = {"taskId": task.task_id, "status": task.status}
    if task.status_message is not None:
        out["statusMessage"] = task.status_message
    out["createdAt"] = timestamp(task.created_at)
    out["lastUpdatedAt"] = timestamp(task.updated_at)
    if per_request:
        out["ttlMs"] = task.ttl_ms
        if task.poll_interval_ms is not None:
            out["pollIntervalMs"] = task.poll_interval_ms
        if detailed:
            status = task.status
            if status == "completed" and task.result is not None:
                out["result"] = without_related(task.result)
            elif status == "failed" and task.error is not None:
                out["error"] = task.error
            elif status == "input_required":
                out["inputRequests"] = task.input_requests or {}
    else:
        out["ttl"] = task.ttl_ms
        if task.poll_interval_ms is not None:
            out["pollInterval"] = task.poll_interval_ms
    return out


def create_result(task: TaskView, *, per_request: bool) -> JSONObject:
    """The answer to the request that created the task (CreateTaskResult)."""
    if per_request:
        return {"resultType": "task", **task_wire(task, per_request=True)}
    return {"task": task_wire(task, per_request=False)}
