"""The Redis connection of the shared HTTP state, and what its failures become.

`connect(url, timeout=...)` makes the `redis.asyncio.Redis` the session store, the event store
and the workers' bus share, with every wait bounded: `timeout` s to open a connection and
`timeout` s for each reply. A connection that turns out broken (Redis restarted: the pool's
connections are dead, a new one works) is replaced and the command sent once more, at once; a
command that timed out is not sent again (a paused or overloaded Redis is not asked twice).
So a command answers or fails within `timeout` s, about twice that when its connection had to
be replaced. A blocking read of the bus's subscription is not bounded (redis-py waits for
messages there without the timeout): it is not a command.

`Unavailable` turns what redis-py raises when Redis fails (`redis.exceptions.RedisError`:
refused, reset, timed out, loading, read-only, ...; `OSError`, `TimeoutError`) into
`StateUnavailable`, whose message names the kind of failure only: redis-py's own text may
quote the URL, and a URL may hold a password.

Nothing of redis is imported until `connect` is called or a failure is mapped.
"""

from __future__ import annotations

import sys
from types import TracebackType
from typing import Any

from mcpkit._extras import optional_dependency
from mcpkit.stores.tasks import StoreUnavailable

__all__ = ["StateUnavailable", "Unavailable", "connect"]


class StateUnavailable(StoreUnavailable):
    """Redis, where the HTTP state is shared, failed (unreachable, refused, reset, paused or
    slower than the timeout): the message says which store and the kind of failure, never
    the URL. The HTTP app answers it with 503 and Retry-After."""


def connect(url: str, *, timeout: float) -> Any:
    """A `redis.asyncio.Redis` for `url` whose every wait is bounded by `timeout` s (see the
    module docstring). Raises MissingExtra without the `redis` package, ValueError for a
    timeout that is not positive, and what redis-py raises for a malformed URL (ValueError)."""
    if not timeout > 0:
        raise ValueError(f"timeout must be a positive number of seconds, not {timeout!r}")
    with optional_dependency():
        import redis.asyncio
        from redis.asyncio.retry import Retry
        from redis.backoff import NoBackoff
        from redis.exceptions import ConnectionError as BrokenConnection

    # One retry, on a broken connection only (TimeoutError is not a ConnectionError).
    retry = Retry(NoBackoff(), 1, supported_errors=(BrokenConnection,))
    return redis.asyncio.Redis.from_url(
        url,
        socket_timeout=timeout,
        socket_connect_timeout=timeout,
        retry=retry,
    )


class Unavailable:
    """`with Unavailable("the session store"):` -- a Redis failure inside leaves as
    StateUnavailable naming `what` and the failure's kind (see the module docstring). A
    plain class, not a generator: it wraps the hot path's one round trip."""

    __slots__ = ("what",)

    def __init__(self, what: str) -> None:
        self.what = what

    def __enter__(self) -> None:
        return None

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if error is None or not is_failure(error):
            return
        message = f"{self.what} is unavailable (Redis: {type(error).__name__})"
        raise StateUnavailable(message) from None


def is_failure(error: BaseException) -> bool:
    """Whether `error` is Redis failing (redis-py's errors, a socket's, a timeout), as
    opposed to a bug or a cancellation."""
    if isinstance(error, OSError):  # TimeoutError (asyncio's too) is one
        return True
    exceptions = sys.modules.get("redis.exceptions")  # loaded if the failure is redis-py's
    return exceptions is not None and isinstance(error, exceptions.RedisError)
