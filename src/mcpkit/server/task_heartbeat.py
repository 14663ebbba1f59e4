"""Heartbeats of the worker processes running tasks on a store they share (Redis).

A task's handler runs in the process that created it; its record is read by every process.
When that process dies (SIGKILL, OOM, a lost machine) nothing would ever end the record: it
would read `working` until its ttl. So each process running tasks renews a heartbeat in the
store, one round trip per period whatever the number of its tasks, and a process reading an
unfinished task of a worker whose heartbeat lapsed (`MISSES` periods) marks it `failed`.

The same round trip reads the status of this process's running tasks, so a task cancelled
through another worker (or marked failed by one that thought this process dead) has its
handler cancelled here within a period.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import Iterator, Mapping
from typing import Any, Protocol

from mcpkit.errors import INTERNAL_ERROR
from mcpkit.protocol.tasks import TERMINAL
from mcpkit.stores.tasks import Heartbeats, StoreUnavailable, TaskRecord, TaskStore

logger = logging.getLogger("mcpkit.server.tasks")

MISSES = 3  # periods without a beat before a worker counts as stopped
STOPPED = "The worker running this task stopped before the task ended"


class Cancellable(Protocol):
    """What the heartbeat needs of a running task (`TaskRun`)."""

    def cancel(self) -> None: ...


class Heartbeat:
    """This process's heartbeat on `store`, every `period` seconds while `runs` (the tasks
    running here, by id) is not empty; and the check of other workers' (`vet`)."""

    def __init__(
        self, store: TaskStore, beats: Heartbeats, period: float, runs: Mapping[str, Cancellable]
    ) -> None:
        self.worker = secrets.token_hex(8)  # a new id per process: a restart is another worker
        self.period = period
        self.ttl = period * MISSES
        self._store = store
        self._beats = beats  # the same store, seen as keeping heartbeats
        self._runs = runs
        self._fresh_until = float("-inf")  # monotonic time the last beat is good until
        self._creating = 0
        self._loop: asyncio.Task[None] | None = None

    @contextlib.asynccontextmanager
    async def creating(self) -> Any:
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

    async def _beat(self) -> dict[str, str]:
        started = time.monotonic()
        statuses = await self._beats.beat(self.worker, self.ttl, list(self._runs))
        self._fresh_until = started + self.period
        return statuses

    async def _keep(self) -> None:
        while self._runs or self._creating:
            await asyncio.sleep(self.period)
            try:
                statuses = await self._beat()
            except StoreUnavailable as exc:  # the next period tries again
                logger.warning("task heartbeat not renewed: %s", exc)
                continue
            for task_id in _ended(statuses):
                run = self._runs.get(task_id)
                if run is not None:  # cancelled through another worker: stop the handler
                    run.cancel()

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
