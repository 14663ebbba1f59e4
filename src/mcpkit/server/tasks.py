"""Tasks, server side: a tool call that outlives its request, in both eras.

How this works. `TaskManager.call_tool` decides, per tools/call, whether the call becomes a
task (see `decide`): in the handshake era the client asks for one (`params.task`, 2025-11-25);
at 2026-07-28 the server decides for a client whose request declared the extension. A task
is a record in the `TaskStore` (what `tasks/get` reads, from any process sharing the store)
plus, in the process running it, a `TaskRun`: the asyncio task of the handler and whatever
the handler is waiting for. The handler is the tool's own function with its own `Context`;
what changes inside a task is where its questions go (`TaskRun.gather`):

- handshake era: a real request to the client, tagged with the related-task `_meta`, while
  the task shows `input_required` (over HTTP it travels on a waiting `tasks/result` stream);
- 2026-07-28: an entry in the task's `inputRequests`, answered by `tasks/update`.

A tool may also start inline and become a task midway (`ctx.continue_as_task()`), which is
how a 2026-07-28 tool asks its questions through input_required rounds first and then runs
in the background: the request is answered with the task, the handler keeps running.

Every task request is checked against who created the task (`owner`: the authenticated
principal, else the handshake session); anyone else gets "not found", never the task.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from mcpkit.errors import (
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    SERVER_ERROR,
    MethodNotFound,
    ProtocolError,
)
from mcpkit.protocol import tasks as wire
from mcpkit.server.task_heartbeat import Heartbeat
from mcpkit.server.task_run import TaskRun
from mcpkit.stores.tasks import Heartbeats, MemoryTaskStore, StoreFull, TaskRecord, TaskStore
from mcpkit.types.eras import Era

if TYPE_CHECKING:
    from mcpkit.server.context import Context

JSONObject = dict[str, Any]
TaskSupport = Literal["optional", "required"]
Run = Callable[["Context"], "JSONObject | Awaitable[JSONObject]"]
logger = logging.getLogger("mcpkit.server.tasks")

_NOT_FOUND = "Failed to retrieve task: Task not found"


@dataclass(frozen=True, slots=True)
class TaskSettings:
    """How a server keeps tasks.

    `store`: where records live (default: a `MemoryTaskStore` of `max_stored` tasks; a
    `mcpkit.stores.redis_tasks.RedisTaskStore` shares them between processes and restarts).
    `max_running`: tasks whose handlers run at once in this process; `max_stored`: records
    held, finished ones included; beyond either a new task is refused (-32000) instead of
    growing without end. `default_ttl_ms` when the client asks for none, `max_ttl_ms` caps
    what it asks; `poll_interval_ms` is the polling pace suggested to clients; `page_size`
    for tasks/list. `clock`: the current time in epoch seconds (default `time.time`), which
    stamps new tasks and is the default store's clock too (a store you give has its own
    `clock=`: give it the same one). `heartbeat`: on a store several processes share
    (`RedisTaskStore`), the seconds between the beats of a process running tasks; a process
    silent for 3 of them has stopped, and its unfinished tasks read as failed.
    """

    store: TaskStore | None = None
    max_running: int = 64
    max_stored: int = 10_000
    default_ttl_ms: int = 3_600_000
    max_ttl_ms: int = 86_400_000
    poll_interval_ms: int = 500
    page_size: int = 100
    clock: Callable[[], float] = time.time
    heartbeat: float = 5.0


def task_support(value: bool | str | None) -> TaskSupport | None:
    """A tool's `task=` option as the spec's taskSupport (None: forbidden). Raises ValueError."""
    if value is None or value is False or value == "forbidden":
        return None
    if value is True or value == "optional":
        return "optional"
    if value == "required":
        return "required"
    raise ValueError(
        f"task= takes True, False, 'optional', 'required' or 'forbidden', not {value!r}"
    )


def owner_of(ctx: Context) -> str | None:
    """Whom a task belongs to: the principal; else the handshake session; else nobody (a
    2026-07-28 or stateless request without authorization: the 128-bit id is the secret)."""
    principal = ctx.principal
    if principal is not None:
        return principal.key
    if ctx.envelope is not None:
        return None  # 2026-07-28 has no sessions, even over stdio
    state = ctx.state
    if state is None:
        return None
    # An HTTP session is served by whichever worker its request lands on, each with its own
    # SessionState: its tasks belong to its id, which they all know. Hashed: the owner is
    # stored and logged, the id is a bearer secret.
    session_id = getattr(getattr(ctx.peer, "transport", None), "session_id", None)
    if type(session_id) is str:
        digest = hashlib.sha256(b"mcpkit task owner\0" + session_id.encode()).hexdigest()
        return "session:" + digest[:32]
    return state.key


@dataclass(frozen=True, slots=True)
class TaskSwitch:
    """What lets an inline call become a task: the manager, and the future that answers the
    request with the task."""

    manager: TaskManager
    future: asyncio.Future[JSONObject]

    async def switch(self, ctx: Context, message: str | None) -> bool:
        return await self.manager.continue_as_task(ctx, message)


class TaskManager:
    """The server's tasks: creating them from tool calls, running them, and the tasks/*
    handlers of both eras."""

    def __init__(
        self,
        settings: TaskSettings | None = None,
        notify: Callable[[str, JSONObject], Any] | None = None,
    ) -> None:
        self.settings = settings or TaskSettings()
        self._store = self.settings.store
        self.runs: dict[str, TaskRun] = {}  # handlers running in this process
        # 2026-07-28: (task id, detailed task) to the subscriptions following it
        self.notify_per_request = notify
        self._heartbeat: Heartbeat | None = None

    @property
    def store(self) -> TaskStore:
        if self._store is None:
            self._store = MemoryTaskStore(self.settings.max_stored, clock=self.settings.clock)
        return self._store

    @property
    def heartbeat(self) -> Heartbeat | None:
        """This process's heartbeat, on a store that keeps them (None: one process)."""
        store = self.store
        if self._heartbeat is None and isinstance(store, Heartbeats):
            settings = self.settings
            asking = (settings.poll_interval_ms or 500) / 1000  # answers come at that pace
            self._heartbeat = Heartbeat(store, store, settings.heartbeat, self.runs, asking)
        return self._heartbeat

    def share(self, client: Any, prefix: str) -> None:
        """Several worker processes serve this server through one HTTP state (`RedisState`,
        whose Redis `client` and key `prefix` are given): tasks must be on a store they all
        read. The default store becomes a `RedisTaskStore` on that client, under
        `prefix` + "tasks:"; a store given in the settings is kept. Raises ValueError for a
        `MemoryTaskStore` given in the settings (each worker would have its own), or for no
        store and a state that has no Redis `client` to put one on."""
        settings = self.settings
        if isinstance(settings.store, MemoryTaskStore):
            raise ValueError(
                "this server's TaskSettings(store=MemoryTaskStore(...)) keeps tasks in one "
                "process, but several workers share its HTTP state: give no store (tasks then "
                "go to Redis with the state) or a RedisTaskStore"
            )
        if settings.store is None and not isinstance(self._store, Heartbeats):
            if client is None:
                raise ValueError(
                    "several workers share this server's HTTP state, which has no Redis client "
                    "for its tasks: give Server(tasks=TaskSettings(store=...)) a store they "
                    "share (a RedisTaskStore)"
                )
            from mcpkit.stores.redis_tasks import RedisTaskStore

            self._store = RedisTaskStore(
                client=client,
                prefix=prefix + "tasks:",
                max_tasks=settings.max_stored,
                clock=settings.clock,
            )
            self._heartbeat = None

    def capability(self) -> JSONObject:
        """The 2025-11-25 `tasks` capability (2026-07-28 shows it as the extension)."""
        return {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}

    def handlers(self) -> dict[str, Callable[[Context], Any]]:
        return {
            "tasks/get": self.get_task,
            "tasks/result": self.task_result,
            "tasks/list": self.list_tasks,
            "tasks/cancel": self.cancel_task,
            "tasks/update": self.update_task,
        }

    # -- becoming a task ---------------------------------------------------------------------

    def call_tool(
        self,
        ctx: Context,
        name: str,
        support: TaskSupport | None,
        task_if: Callable[[Context], bool] | None,
        run: Run,
    ) -> JSONObject | Awaitable[JSONObject]:
        """Serve a tools/call of a tool whose task support is `support`: inline, as a task
        made now, or inline with the chance to become one (`ctx.continue_as_task`).

        Raises ProtocolError: -32601 for a task the tool cannot be (or a call it must be a
        task for), -32602 for a malformed params.task, -32021 when a tool that must run as a
        task is called by a 2026-07-28 client without the extension.
        """
        if ctx.envelope is not None:
            if not wire.declares_extension(ctx.envelope.capabilities):
                if support == "required":
                    raise wire.extension_required()
                return run(ctx)
            if support is None:
                return run(ctx)  # a legacy params.task is ignored at 2026-07-28
            if task_if is None or task_if(ctx):
                return self.start(ctx, run, None)
            return self.inline_until_task(ctx, run)
        try:
            ttl = wire.requested_ttl(ctx.params) if _has_tasks(ctx) else False
        except ValueError as exc:
            raise ProtocolError(INVALID_PARAMS, f"Invalid params: {exc}") from None
        if ttl is False:
            if support == "required":
                raise ProtocolError(
                    METHOD_NOT_FOUND,
                    f"Tool {name} runs only as a task: call it with params.task (protocol "
                    f"2025-11-25 or later); this request is not task-augmented",
                )
            return run(ctx)
        if support is None:
            raise ProtocolError(
                METHOD_NOT_FOUND, f"Tool {name} does not support task-augmented calls"
            )
        return self.start(ctx, run, ttl)

    async def start(self, ctx: Context, run: Run, ttl: int | None) -> JSONObject:
        """Create the task, start the handler in it, answer with the task."""
        task_run = await self._create(ctx, ttl)
        task_run.begin(_awaited(run, ctx))
        return wire.create_result(task_run.record, per_request=task_run.per_request)

    async def inline_until_task(self, ctx: Context, run: Run) -> JSONObject:
        """Run the handler inline; if it calls `ctx.continue_as_task()`, answer with the task
        then and let the handler go on in it."""
        switched: asyncio.Future[JSONObject] = asyncio.get_running_loop().create_future()
        ctx.task_switch = TaskSwitch(self, switched)
        body = asyncio.ensure_future(_awaited(run, ctx))
        try:
            await asyncio.wait((body, switched), return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            if not switched.done():
                body.cancel()  # still inline: the request's cancellation is the handler's
            raise
        if switched.done():
            return switched.result()
        switched.cancel()
        return body.result()

    async def continue_as_task(self, ctx: Context, message: str | None) -> bool:
        """The handler of an inline call goes on as a task (`Context.continue_as_task`, which
        has checked that it can)."""
        switch = ctx.task_switch
        assert switch is not None and ctx.task is None
        task_run = await self._create(ctx, None, message)
        current = asyncio.current_task()
        assert current is not None
        task_run.adopt(current)
        switch.future.set_result(
            wire.create_result(task_run.record, per_request=task_run.per_request)
        )
        return True

    async def _create(self, ctx: Context, ttl: int | None, message: str | None = None) -> TaskRun:
        settings = self.settings
        if len(self.runs) >= settings.max_running:
            raise ProtocolError(
                SERVER_ERROR,
                f"Server busy: {settings.max_running} tasks are running; try again later",
            )
        now = settings.clock()
        ttl_ms = settings.default_ttl_ms if ttl is None else min(ttl, settings.max_ttl_ms)
        heartbeat = self.heartbeat
        record = TaskRecord(
            task_id=secrets.token_urlsafe(16),  # 128 random bits
            owner=owner_of(ctx),
            method=ctx.request.method,
            status="working",
            created_at=now,
            updated_at=now,
            ttl_ms=ttl_ms,
            poll_interval_ms=settings.poll_interval_ms,
            status_message=message,
            worker=None if heartbeat is None else heartbeat.worker,
        )
        async with contextlib.nullcontext() if heartbeat is None else heartbeat.creating():
            try:
                await self.store.create(record)
            except StoreFull as exc:
                raise ProtocolError(SERVER_ERROR, f"Server busy: {exc}; try again later") from None
            task_run = TaskRun(self, record, ctx)  # the manager is its TaskHost
            ctx.task = task_run
            self.runs[record.task_id] = task_run
        logger.info("task %s created for %s by %s", record.task_id, record.method, record.owner)
        return task_run

    async def followable(self, ctx: Context, task_ids: list[str]) -> list[str]:
        """The ids among `task_ids` the caller of a subscriptions/listen may follow: its own
        tasks that are still known."""
        owner = owner_of(ctx)
        kept = []
        for task_id in task_ids:
            record = await self.store.get(task_id)
            if record is not None and record.owner == owner:
                kept.append(task_id)
        return kept

    # -- the tasks/* requests ------------------------------------------------------------------

    async def _find(self, ctx: Context) -> TaskRecord:
        """The task a tasks/* request names, if the caller owns it. Raises -32602 else
        (unknown, expired and someone else's read the same)."""
        try:
            task_id = wire.task_id_of(ctx.params)
        except ValueError as exc:
            raise ProtocolError(INVALID_PARAMS, f"Invalid params: {exc}") from None
        record = await self.store.get(task_id)
        if record is None or record.owner != owner_of(ctx):
            if record is not None:
                logger.warning("task %s asked for by another caller", task_id)
            raise ProtocolError(INVALID_PARAMS, _NOT_FOUND, {"taskId": task_id})
        return (await self._vetted([record]))[0]

    async def _vetted(self, records: list[TaskRecord]) -> list[TaskRecord]:
        """`records` as they read now: unfinished ones whose worker stopped, failed."""
        heartbeat = self.heartbeat
        return records if heartbeat is None else await heartbeat.vet(records)

    def _check_per_request(self, ctx: Context) -> None:
        envelope = ctx.envelope
        if envelope is not None and not wire.declares_extension(envelope.capabilities):
            raise wire.extension_required()

    async def get_task(self, ctx: Context) -> JSONObject:
        self._check_per_request(ctx)
        record = await self._find(ctx)
        per_request = ctx.era is Era.PER_REQUEST
        return wire.task_wire(record, per_request=per_request, detailed=per_request)

    async def task_result(self, ctx: Context) -> JSONObject:
        """2025-11-25: wait for the task to end; its result, or its JSON-RPC error."""
        if ctx.era is Era.PER_REQUEST:
            raise MethodNotFound("tasks/result")
        record = await self._find(ctx)
        while not record.terminal:
            task_run = self.runs.get(record.task_id)
            if task_run is not None:
                await task_run.wait(ctx)
            else:  # running in another process: poll the shared store
                await asyncio.sleep((record.poll_interval_ms or 500) / 1000)
            found = await self.store.get(record.task_id)
            if found is None:
                raise ProtocolError(INVALID_PARAMS, "Failed to retrieve task: Task has expired")
            record = (await self._vetted([found]))[0]
        if record.status == "cancelled":
            raise ProtocolError(INVALID_PARAMS, "Task was cancelled", {"taskId": record.task_id})
        if record.error is not None:
            error = record.error
            raise ProtocolError(error["code"], error["message"], error.get("data"))
        return wire.with_related(record.result or {}, record.task_id)

    async def list_tasks(self, ctx: Context) -> JSONObject:
        if ctx.era is Era.PER_REQUEST:
            raise MethodNotFound("tasks/list")
        cursor = ctx.params.get("cursor")
        if cursor is not None and type(cursor) is not str:
            raise ProtocolError(INVALID_PARAMS, "Invalid params: cursor must be a string")
        try:
            page, after = await self.store.list(owner_of(ctx), cursor, self.settings.page_size)
        except ValueError as exc:
            raise ProtocolError(INVALID_PARAMS, f"Invalid params: {exc}") from None
        page = await self._vetted(page)
        result: JSONObject = {"tasks": [wire.task_wire(r, per_request=False) for r in page]}
        if after is not None:
            result["nextCursor"] = after
        return result

    async def cancel_task(self, ctx: Context) -> JSONObject:
        self._check_per_request(ctx)
        record = await self._find(ctx)
        if record.terminal:
            if ctx.era is Era.PER_REQUEST:  # the extension: an idempotent acknowledgement
                return {}
            raise ProtocolError(
                INVALID_PARAMS,
                f"Cannot cancel task: already in terminal status '{record.status}'",
                {"taskId": record.task_id},
            )
        changes = {"status": "cancelled", "status_message": "The task was cancelled by request."}
        updated = await self.store.update(record.task_id, changes) or record
        task_run = self.runs.get(record.task_id)
        if task_run is not None:
            task_run.cancel()
            task_run.announce(updated)
        logger.info("task %s cancelled", record.task_id)
        return {} if ctx.era is Era.PER_REQUEST else wire.task_wire(updated, per_request=False)

    async def update_task(self, ctx: Context) -> JSONObject:
        """2026-07-28: answers to the task's input requests. Unknown or already answered keys
        are ignored (the extension's rule); an answer that does not fit its request is
        refused (-32602) and stays outstanding."""
        if ctx.era is Era.HANDSHAKE:
            raise MethodNotFound("tasks/update")
        self._check_per_request(ctx)
        record = await self._find(ctx)
        responses = ctx.params.get("inputResponses")
        if type(responses) is not dict or any(type(v) is not dict for v in responses.values()):
            raise ProtocolError(
                INVALID_PARAMS,
                "Invalid params: inputResponses must map each input request key to its answer "
                "(an object)",
            )
        task_run = self.runs.get(record.task_id)
        if task_run is not None and not record.terminal:
            await task_run.answer(responses)
        elif not record.terminal and record.worker is not None:
            await self._forward(record, responses)
        return {}

    async def _forward(self, record: TaskRecord, responses: JSONObject) -> None:
        """Answers for a task another worker runs: left in the store, which that worker reads
        at its next beat (checked against the questions there: one that does not fit is
        dropped and the question stays open)."""
        store = self.store
        if isinstance(store, Heartbeats):
            expires = record.expires_at
            left = 3600.0 if expires is None else max(1.0, expires - self.settings.clock())
            await store.send_answers(record.task_id, responses, left)

    async def aclose(self) -> None:
        """Cancel every running task (the server is shutting down) and wait for them."""
        runs = list(self.runs.values())
        for task_run in runs:
            task_run.cancel()
        await asyncio.gather(*(r.done for r in runs if r.task is not None), return_exceptions=True)
        if self._heartbeat is not None:
            await self._heartbeat.aclose()


def _has_tasks(ctx: Context) -> bool:
    return (ctx.protocol_version or "") >= "2025-11-25"


async def _awaited(run: Run, ctx: Context) -> JSONObject:
    outcome = run(ctx)
    if isinstance(outcome, dict):
        return outcome
    return await outcome
