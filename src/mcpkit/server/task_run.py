"""`TaskRun`: a task whose handler runs in this process (see `server.tasks` for the whole).

It owns the handler's asyncio task, writes each change of status to the store (a terminal
status is final: the store refuses to change it), tells whoever follows the task, and routes
the handler's questions the way the task's era asks them: a real request tagged with the task
(2025-11-25), or `inputRequests` answered through `tasks/update` (2026-07-28).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, Protocol

from mcpkit.errors import INVALID_PARAMS, ProtocolError
from mcpkit.protocol import tasks as wire
from mcpkit.protocol.per_request import missing_capability
from mcpkit.runtime.handling import failure
from mcpkit.server.asks import Ask, AskKeys, missing_for
from mcpkit.stores.tasks import TaskRecord, TaskStore

if TYPE_CHECKING:
    from mcpkit.server.context import Context

JSONObject = dict[str, Any]
logger = logging.getLogger("mcpkit.server.tasks")


class TaskHost(Protocol):
    """What a run needs of its `TaskManager`."""

    @property
    def store(self) -> TaskStore: ...

    @property
    def runs(self) -> dict[str, TaskRun]: ...

    @property
    def notify_per_request(self) -> Callable[[str, JSONObject], Any] | None: ...


class TaskRun:
    """A task whose handler runs in this process: its asyncio task and open questions."""

    def __init__(self, manager: TaskHost, record: TaskRecord, ctx: Context) -> None:
        self.manager = manager
        self.record = record
        self.ctx = ctx
        self.per_request = ctx.envelope is not None
        self.task: asyncio.Task[Any] | None = None
        self.done = asyncio.get_running_loop().create_future()
        self._settling: asyncio.Future[None] | None = None
        # Keys go on from those of the input_required rounds before the task, if any.
        self._keys = AskKeys(0 if ctx.round is None else ctx.round.count)
        self._pending: dict[str, tuple[Ask, asyncio.Future[Any]]] = {}
        # (peer, request id) of tasks/result calls waiting for the task (handshake era)
        self._waiting: list[tuple[Any, Any]] = []

    @property
    def task_id(self) -> str:
        return self.record.task_id

    @property
    def asking(self) -> bool:
        """Whether the handler waits for answers (2026-07-28 inputRequests)."""
        return bool(self._pending)

    def begin(self, body: Coroutine[Any, Any, JSONObject]) -> None:
        self.task = asyncio.ensure_future(body)
        self.task.add_done_callback(self._ended)

    def adopt(self, current: asyncio.Task[Any]) -> None:
        """The handler's own task (an inline call's) becomes the task's (`continue_as_task`):
        its result is the tool result."""
        self.task = current
        current.add_done_callback(self._ended)

    def cancel(self) -> None:
        if self.task is not None and not self.task.done():
            self.task.cancel()

    async def wait(self, ctx: Context) -> None:
        """Block a tasks/result until the task ends; its stream carries the task's questions."""
        waiter = (ctx.peer, ctx.request_id)
        self._waiting.append(waiter)
        try:
            await asyncio.shield(self.done)
        finally:
            self._waiting.remove(waiter)

    # -- the outcome ---------------------------------------------------------------------------

    def _ended(self, task: asyncio.Task[Any]) -> None:
        if task.cancelled():
            changes: JSONObject = {"status": "cancelled"}
        else:
            exc = task.exception()
            changes = self._changes(None if exc is not None else task.result(), exc)
        self._settling = asyncio.ensure_future(self._settle(changes))

    def _changes(self, result: JSONObject | None, exc: BaseException | None) -> JSONObject:
        if exc is not None:
            if not isinstance(exc, Exception):
                exc = RuntimeError(f"the handler stopped: {exc!r}")
            code, message, data = failure(self.record.method, exc)
            error: JSONObject = {"code": code, "message": message}
            if data is not None:
                error["data"] = data
            return {"status": "failed", "error": error, "status_message": message}
        assert result is not None
        if not self.per_request and result.get("isError"):
            # 2025-11-25: a tool error fails the task (tasks/result still returns the result)
            return {"status": "failed", "result": result, "status_message": _error_text(result)}
        return {"status": "completed", "result": result}

    async def _settle(self, changes: JSONObject) -> None:
        manager = self.manager
        try:
            changes["input_requests"] = None
            updated = await manager.store.update(self.task_id, changes)
            if updated is not None:
                self.record = updated
                self.announce(updated)
                logger.info("task %s %s", self.task_id, updated.status)
        except Exception:
            logger.exception("task %s: could not store its outcome", self.task_id)
        finally:
            manager.runs.pop(self.task_id, None)
            if not self.done.done():
                self.done.set_result(None)

    def announce(self, record: TaskRecord) -> None:
        """The change of status to whoever follows the task (optional in the spec; sent on
        every change): notifications/tasks/status to a handshake-era session, 2026-07-28
        notifications/tasks to the subscriptions that named the task."""
        if self.per_request:
            notify = self.manager.notify_per_request
            if notify is not None:
                notify(self.task_id, wire.task_wire(record, per_request=True, detailed=True))
            return
        if self.ctx.state is None:
            return
        try:
            self.ctx.peer.notify(
                "notifications/tasks/status", wire.task_wire(record, per_request=False)
            )
        except Exception:  # the session is gone, or the client cannot take it: it polls
            logger.debug("task %s: status notification not sent", self.task_id, exc_info=True)

    async def _status(self, status: str, **more: Any) -> None:
        updated = await self.manager.store.update(self.task_id, {"status": status, **more})
        if updated is not None and updated.status != self.record.status:
            self.announce(updated)
        if updated is not None:
            self.record = updated

    async def note(self, message: str) -> None:
        """A progress message becomes the task's statusMessage."""
        updated = await self.manager.store.update(self.task_id, {"status_message": message})
        if updated is not None:
            self.record = updated

    # -- questions from inside the task ----------------------------------------------------------

    async def gather(self, ctx: Context, asks: tuple[Ask, ...]) -> list[Any]:
        """The handler's questions, asked the way the task's era asks them."""
        if not self.per_request:
            await self._status("input_required")
            try:
                results = await asyncio.gather(*(self._send(ctx, ask) for ask in asks))
            finally:
                await self._status("working")
            return [ask.parse(result) for ask, result in zip(asks, results, strict=True)]
        keys = self._keys.keys(asks)  # unique over the task's life (the extension)
        round_answers = {} if ctx.round is None else ctx.round.answers
        unanswered = [ask for key, ask in zip(keys, asks, strict=True) if key not in round_answers]
        missing = missing_for(unanswered, self.ctx.client_capabilities)
        if missing:
            raise missing_capability(missing)
        loop = asyncio.get_running_loop()
        waits: list[asyncio.Future[Any]] = []
        for key, ask in zip(keys, asks, strict=True):
            future: asyncio.Future[Any] = loop.create_future()
            if key in round_answers:  # answered in an input_required round before the task
                future.set_result(ask.parse(round_answers[key]))
            else:
                self._pending[key] = (ask, future)
            waits.append(future)
        if self._pending:
            await self._publish_questions()
        try:
            return list(await asyncio.gather(*waits))
        finally:
            for key in keys:
                self._pending.pop(key, None)

    async def _publish_questions(self) -> None:
        requests = {key: ask.request() for key, (ask, _) in self._pending.items()}
        if requests:
            await self._status("input_required", input_requests=requests)
        else:
            await self._status("working", input_requests=None)

    async def answer(self, responses: JSONObject) -> None:
        """tasks/update: resolve the outstanding questions these responses answer."""
        parsed: list[tuple[asyncio.Future[Any], Any]] = []
        for key, response in responses.items():
            pending = self._pending.get(key)
            if pending is None or pending[1].done():
                continue  # never asked, or answered already: ignored
            ask, future = pending
            try:
                parsed.append((future, ask.parse(response)))
            except (ValueError, TypeError) as exc:
                raise ProtocolError(
                    INVALID_PARAMS,
                    f"Invalid params: the answer to input request {key!r} does not fit it: {exc}",
                    {"key": key},
                ) from None
        for future, value in parsed:
            future.set_result(value)
        for key in [k for k, (_, f) in self._pending.items() if f.done()]:
            del self._pending[key]
        await self._publish_questions()

    async def _send(self, ctx: Context, ask: Ask) -> JSONObject:
        params = dict(ask.params or {})
        meta = params.get("_meta")
        params["_meta"] = {**(meta or {}), **wire.related_meta(self.task_id)}
        # Over HTTP a request needs a stream: that of a tasks/result waiting for this task.
        related = next((i for peer, i in reversed(self._waiting) if peer is ctx.peer), None)
        return await ctx.peer.request(ask.method, params, related_id=related)


def _error_text(result: JSONObject) -> str:
    for block in result.get("content") or ():
        if type(block) is dict and block.get("type") == "text":
            return str(block.get("text"))[:500]
    return "The tool reported an error"
