"""Middleware: code around every request and notification a `Server` handles.

    server = Server("app", middleware=[ErrorMasking(), RequestLogging(), RateLimit(5)])
    server.add_middleware(ToolTimeout(30))

See `base` for the hooks and their order, and docs/middleware.md.
"""

from mcpkit.server.middleware.base import (
    TYPED_HOOKS,
    CallNext,
    Middleware,
    MiddlewareContext,
)
from mcpkit.server.middleware.caching import ListCache
from mcpkit.server.middleware.masking import ErrorMasking
from mcpkit.server.middleware.observe import Durations, RequestLogging, RequestTiming
from mcpkit.server.middleware.ratelimit import (
    RATE_LIMITED,
    Buckets,
    LocalBuckets,
    RateLimit,
    RedisBuckets,
)
from mcpkit.server.middleware.timeout import ToolTimeout

__all__ = [
    "RATE_LIMITED",
    "TYPED_HOOKS",
    "Buckets",
    "CallNext",
    "Durations",
    "ErrorMasking",
    "ListCache",
    "LocalBuckets",
    "Middleware",
    "MiddlewareContext",
    "RateLimit",
    "RedisBuckets",
    "RequestLogging",
    "RequestTiming",
    "ToolTimeout",
]
