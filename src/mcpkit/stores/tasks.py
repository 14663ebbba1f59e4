"""Where tasks live: `TaskRecord`, the `TaskStore` interface, and the in-memory store.

A store keeps records, not running work: the server process that runs a task's handler
writes its progress and outcome through `update`, and any process that shares the store
(Redis) can answer `tasks/get` for it. Two rules every store keeps:

- A terminal record (completed, failed, cancelled) never changes again: `update` on one is
  refused and returns the record as it stands, so a handler finishing after a cancel cannot
  overwrite `cancelled`.
- A record is gone once its ttl has passed since creation (`get` returns None and the store
  purges it); a record without a ttl stays until deleted. Stores are bounded: `create`
  raises `StoreFull` rather than growing without end.

A store shared by several processes also keeps their `Heartbeats`, so that a task whose
process died is seen as such by the others instead of staying `working` until its ttl.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any, Protocol, runtime_checkable

from mcpkit.errors import MCPError
from mcpkit.protocol.tasks import TERMINAL

JSONObject = dict[str, Any]


class StoreFull(MCPError):
    """The store holds as many tasks as it may; none is created."""


class StoreUnavailable(MCPError):
    """The store's backend failed (Redis unreachable, refused, timed out): the message names
    the kind of failure, never the backend's URL (it may hold a password)."""


@dataclass(slots=True)
class TaskRecord:
    """One task as stored. Times are seconds since the epoch; durations milliseconds."""

    task_id: str
    owner: str | None  # who may see it: a principal or session key (None: whoever has the id)
    method: str
    status: str
    created_at: float
    updated_at: float
    ttl_ms: int | None
    poll_interval_ms: int | None
    status_message: str | None = None
    result: JSONObject | None = None  # the request's result, once completed
    error: JSONObject | None = None  # the JSON-RPC error, once failed
    input_requests: JSONObject | None = None  # outstanding asks (2026-07-28), by key
    worker: str | None = None  # the process running it, on a store with `Heartbeats`

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    @property
    def expires_at(self) -> float | None:
        return None if self.ttl_ms is None else self.created_at + self.ttl_ms / 1000

    def to_dict(self) -> JSONObject:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, data: JSONObject) -> TaskRecord:
        return cls(**{f.name: data.get(f.name) for f in fields(cls)})  # type: ignore[arg-type]


FIELDS = frozenset(f.name for f in fields(TaskRecord))


class TaskStore(Protocol):
    """Task records, shared by whatever serves the same tasks."""

    async def create(self, record: TaskRecord) -> None:
        """Store a new record; it is readable (`get`) when this returns. Raises StoreFull."""
        ...

    async def get(self, task_id: str) -> TaskRecord | None:
        """The record, or None (unknown or expired)."""
        ...

    async def update(self, task_id: str, changes: JSONObject) -> TaskRecord | None:
        """Apply `changes` (field -> value; `updated_at` is set) unless the record is
        terminal; return the record as it stands after, or None when it is gone."""
        ...

    async def list(
        self, owner: str | None, cursor: str | None, limit: int
    ) -> tuple[list[TaskRecord], str | None]:
        """One page of `owner`'s records, oldest first, and the cursor of the next page.
        Raises ValueError for a cursor this store did not give."""
        ...

    async def delete(self, task_id: str) -> None: ...

    async def aclose(self) -> None: ...


@runtime_checkable
class Heartbeats(Protocol):
    """Which processes running tasks are alive, for a store that several processes share.
    A process running tasks calls `beat` every period; one that missed `ttl` seconds of them
    has stopped. The store also carries answers to a task's questions (2026-07-28
    `tasks/update`) from the process that received them to the one running the task."""

    async def beat(
        self, worker: str, ttl: float, task_ids: Sequence[str], asking: Sequence[str] = ()
    ) -> Beat:
        """Say `worker` is alive for `ttl` s more; the status of each of `task_ids` still
        stored (what another process may have changed: a cancel), and the answers sent for
        each of `asking` (taken: the next beat does not see them again). Raises
        StoreUnavailable."""
        ...

    async def alive(self, workers: Collection[str]) -> set[str]:
        """Those of `workers` whose last beat is younger than its ttl. Raises StoreUnavailable."""
        ...

    async def send_answers(self, task_id: str, responses: JSONObject, ttl: float) -> None:
        """Leave `responses` (input request key -> answer) for the process running the task,
        kept `ttl` s at most. Raises StoreUnavailable."""
        ...


@dataclass(frozen=True, slots=True)
class Beat:
    """What a heartbeat read: statuses by task id, and answers sent by task id."""

    statuses: dict[str, str]
    answers: dict[str, JSONObject]


class MemoryTaskStore:
    """Records in this process (the default store): lost when it exits. A record handed out
    is never changed afterwards (`update` stores a new one), so none is copied.

    `max_tasks` bounds what is held, finished tasks included (StoreFull beyond it, after
    expired ones are purged). Measured: 10,000 finished tasks with small results take about
    4 MiB (bench/tasks_cost.py).
    """

    def __init__(self, max_tasks: int = 10_000, *, clock: Callable[[], float] = time.time):
        self.max_tasks = max_tasks
        self._clock = clock
        self._records: dict[str, TaskRecord] = {}  # in creation order
        self._expiry: list[tuple[float, str]] = []  # heap of (expires_at, task_id)

    def __len__(self) -> int:
        return len(self._records)

    async def create(self, record: TaskRecord) -> None:
        self._purge()
        if len(self._records) >= self.max_tasks:
            raise StoreFull(f"the task store holds its limit of {self.max_tasks} tasks")
        self._records[record.task_id] = record
        expires = record.expires_at
        if expires is not None:
            heapq.heappush(self._expiry, (expires, record.task_id))

    async def get(self, task_id: str) -> TaskRecord | None:
        return self._live(task_id)

    async def update(self, task_id: str, changes: JSONObject) -> TaskRecord | None:
        record = self._live(task_id)
        if record is None or record.terminal:
            return record
        # A new record, never a change to one handed out (callers keep what they were given).
        changed = replace(record, **changes, updated_at=self._clock())
        self._records[task_id] = changed
        return changed

    async def list(
        self, owner: str | None, cursor: str | None, limit: int
    ) -> tuple[list[TaskRecord], str | None]:
        self._purge()
        records = iter(self._records.values())
        if cursor is not None:
            if cursor not in self._records:
                raise ValueError("unknown or expired cursor")
            for record in records:  # skip up to and including the cursor's record
                if record.task_id == cursor:
                    break
        page: list[TaskRecord] = []
        for record in records:
            if record.owner != owner:
                continue
            if len(page) == limit:
                return page, page[-1].task_id
            page.append(record)
        return page, None

    async def delete(self, task_id: str) -> None:
        self._records.pop(task_id, None)

    async def aclose(self) -> None:
        self._records.clear()
        self._expiry.clear()

    def _live(self, task_id: str) -> TaskRecord | None:
        record = self._records.get(task_id)
        if record is None:
            return None
        expires = record.expires_at
        if expires is not None and expires <= self._clock():
            del self._records[task_id]
            return None
        return record

    def _purge(self) -> None:
        now, heap, records = self._clock(), self._expiry, self._records
        while heap and heap[0][0] <= now:
            _, task_id = heapq.heappop(heap)
            record = records.get(task_id)
            if record is not None and record.expires_at is not None and record.expires_at <= now:
                del records[task_id]
