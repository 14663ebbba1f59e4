"""Shared state behind small interfaces, each with an in-memory implementation and a Redis one
(`mcpkit[redis]`, imported only when used): tasks today."""

from mcpkit.stores.tasks import (
    MemoryTaskStore,
    StoreFull,
    StoreUnavailable,
    TaskRecord,
    TaskStore,
)

__all__ = ["MemoryTaskStore", "StoreFull", "StoreUnavailable", "TaskRecord", "TaskStore"]
