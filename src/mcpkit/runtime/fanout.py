"""Fan-out beyond this process: the server's notifications meant for every client it serves.

A server alone tells its own clients when a list changed, a resource was updated or a task
moved. Several worker processes serving one service (`RedisState`) must tell each other's
clients too: the server hands each such event to its `FanOut` after telling its own, and
takes the events other workers made through `Server.deliver`, telling only its own.
"""

from __future__ import annotations

from typing import Any, Protocol

# ("list_changed", kind) | ("resource_updated", uri) | ("task_status", task id, task)
FanOutEvent = tuple[Any, ...]


class FanOut(Protocol):
    """Where a server's fan-out events go beyond this process."""

    def publish(self, event: FanOutEvent) -> None:
        """Tell the other workers (must not wait: it is called from synchronous code)."""
        ...


class FanOutTarget(Protocol):
    """A server as its fan-out sees it: events go out through `fanout`, and come in
    through `deliver` (told to this process's clients only)."""

    fanout: FanOut | None

    def deliver(self, event: FanOutEvent) -> None: ...
