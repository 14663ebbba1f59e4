"""Heartbeats of the worker processes running tasks on a store they share (Redis).

A task's handler runs in the process that created it; its record is read by every process.
When that process dies (SIGKILL, OOM, a lost machine) nothing would ever end the record: it
would read `working` until its ttl. So each process running tasks renews a heartbeat in the
store, one round trip per period whatever the number of its tasks, and a process reading an
unfinished task of a worker whose heartbeat lapsed (`MISSES` periods) marks it `failed`.

The same round trip reads the status of this process's running tasks, so a task cancelled
through another worker (or marked failed by one that thought this process dead) has its
handler cancelled here within a period; and, for the tasks waiting for answers, the answers
another worker received (2026-07-28 `tasks/update`). While a task of this process waits for
answers, the beat comes at the quicker `asking` pace (the tasks' poll interval).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import Any, Protocol

from mcpkit.errors import INTERNAL_ERROR, ProtocolError
from mcpkit.protocol.tasks import TERMINAL
from mcpkit.stores.tasks import Beat, Heartbeats, StoreUnavailable, TaskRecord, TaskStore

logger = logging.getLogger("mcpkit.server.tasks")

MISSES = 3  # periods without a beat before a worker counts as stopped
STOPPED = "The worker running this task stopped before the task ended"


class Running(Protocol):
    """What the heartbeat needs of a running task (`TaskRun`)."""

    @property
    def asking(self) -> bool:
        """Whether it waits for answers to its questions."""
        ...

    def cancel(self) -> None: ...

    async def answer(self, responses: dict[str, Any]) -> None: ...


class Heartbeat:
    """This process's heartbeat on `store`, every `period` seconds (every `asking` seconds
    while a task waits for answers) as long as `runs` (the tasks running here, by id) is not
    empty; and the check of other workers' (`vet`)."""

    def __init__(
        self,
        store: TaskStore,
        beats: Heartbeats,
        period: float,
        runs: Mapping[str, Running],
        asking: float = 0.5,
    ) -> None:
        self.worker = secrets.token_hex(8)  # a new id per process: a restart is another worker
        self.period = period
        self.asking = min(asking, period)
        self.ttl = period * MISSES
        self._store = store
        self._beats = beats  # the same store, seen as keeping heartbeats
        self._runs = runs
        self._fresh_until = float("-inf")  # monotonic time the last beat is good until
        self._creating = 0
        self._loop: asyncio.Task[None] | None = None

    @contextlib.asynccontextmanager
    async def creating(self) -> AsyncIterator[None]:
        """Around the creation of a task here: the beat is fresh before the record is
        written (a reader must not find it orphaned), and kept fresh while tasks run."""
        self._creating += 1
        try:
            if time.monotonic() >= self._fresh_until:
                await self._beat()
            if self._loop is None or self._loop.done():
                self._loop = asyncio.get_running_loop().create_task(self._keep())
            yield
        finally:
            self._creating -= 1

    async def _beat(self, asking: Sequence[str] = ()) -> Beat:
        started = time.monotonic()
        beat = await self._beats.beat(self.worker, self.ttl, list(self._runs), asking)
        self._fresh_until = started + self.period
        return beat

    async def _keep(self) -> None:
        while self._runs or self._creating:
            # Wake at the quick pace; beat then if a task asks, else once a period.
            await asyncio.sleep(self.asking)
            asking = [task_id for task_id, run in self._runs.items() if run.asking]
            if not asking and time.monotonic() < self._fresh_until:
                continue
            try:
                await self._apply(await self._beat(asking))
            except StoreUnavailable as exc:  # the next period tries again
                logger.warning("task heartbeat: %s", exc)
            except Exception:  # never let the beat stop: the others would fail our tasks
                logger.exception("task heartbeat")

    async def _apply(self, beat: Beat) -> None:
        for task_id in _ended(beat.statuses):
            run = self._runs.get(task_id)
            if run is not None:  # cancelled through another worker: stop the handler
                run.cancel()
        for task_id, responses in beat.answers.items():
            run = self._runs.get(task_id)
            if run is None:
                continue
            try:
                await run.answer(responses)
            except ProtocolError as exc:  # an answer that does not fit: the question stays
                logger.warning("task %s: answers from another worker refused: %s", task_id, exc)

    async def vet(self, records: list[TaskRecord]) -> list[TaskRecord]:
        """`records` as they should read: an unfinished one whose worker stopped beating is
        marked failed (in the store, for everyone). Raises StoreUnavailable."""
        suspects = {
            r.worker
            for r in records
            if not r.terminal and r.worker is not None and r.worker != self.worker
        }
        if not suspects:
            return records
        stopped = suspects - await self._beats.alive(suspects)
        if not stopped:
            return records
        return [await self._fail(r) if r.worker in stopped else r for r in records]

    async def _fail(self, record: TaskRecord) -> TaskRecord:
        changes = {
            "status": "failed",
            "status_message": STOPPED,
            "error": {"code": INTERNAL_ERROR, "message": STOPPED},
            "input_requests": None,
        }
        logger.warning("task %s: its worker stopped; marked failed", record.task_id)
        updated = await self._store.update(record.task_id, changes)  # refused if it ended
        return record if updated is None else updated

    async def aclose(self) -> None:
        if self._loop is not None:
            self._loop.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._loop


def _ended(statuses: Mapping[str, str]) -> Iterator[str]:
    return (task_id for task_id, status in statuses.items() if status in TERMINAL)
