"""Per-upstream limits: what one upstream server may cost the proxy and its other sessions.

`UpstreamLimits` is given to `proxy(target, limits=...)`; the proxy keeps one `UpstreamGuard`
for its upstream. Decisions (docs/gateway.md, "Security and limits"):

- Rate (`rate` requests per second, a token bucket of `burst`): a request over the rate is
  refused at once (-32603, `data.retryAfter` in seconds), not queued: a client that floods
  learns it and the queue cannot grow without bound.
- Concurrency (`max_in_flight` calls): the rest wait for a place, bounded by the downstream
  client's own timeout or cancel; a short burst of calls then succeeds instead of failing.
- Size (`max_result_bytes`): an upstream answer longer than this, as JSON, is -32603 naming
  the limit; the answer itself is dropped.
- Notifications (`max_notifications_per_second` from one upstream client): past the cap a
  session's upstream is closed and the session told (`upstreams.py`); the shared upstream's
  extra notifications are dropped for the rest of that second.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import orjson

from mcpkit.errors import INTERNAL_ERROR, ProtocolError
from mcpkit.host.config import ConfigError

JSONObject = dict[str, Any]
Notify = Callable[[str, "JSONObject | None"], "Awaitable[None] | None"]
logger = logging.getLogger("mcpkit.gateway")


@dataclass(frozen=True, slots=True)
class UpstreamLimits:
    """What one upstream may cost. None turns a limit off. The defaults are generous: they
    stop a broken or hostile upstream, not a busy one."""

    max_result_bytes: int | None = 16 * 1024 * 1024
    rate: float | None = None  # requests per second sent to the upstream
    burst: int | None = None  # requests at once before `rate` applies (default: max(1, rate))
    max_in_flight: int | None = None  # upstream calls at once; the rest wait
    max_notifications_per_second: int | None = 1000

    def __post_init__(self) -> None:
        for name in ("max_result_bytes", "rate", "burst", "max_in_flight"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise ValueError(f"UpstreamLimits.{name} must be positive or None, not {value!r}")
        flood = self.max_notifications_per_second
        if flood is not None and flood <= 0:
            raise ValueError("UpstreamLimits.max_notifications_per_second must be positive or None")


# A gateway entry's `"limits"` keys (camelCase, as the configuration's other keys) -> fields.
LIMITS_KEY = "limits"
_CONFIG_FIELDS = {
    "maxResultBytes": "max_result_bytes",
    "rate": "rate",
    "burst": "burst",
    "maxInFlight": "max_in_flight",
    "maxNotificationsPerSecond": "max_notifications_per_second",
}
_WHOLE = frozenset({"maxResultBytes", "burst", "maxInFlight", "maxNotificationsPerSecond"})


def limits_from_config(server: str, given: Any) -> UpstreamLimits:
    """The limits of a gateway entry's `"limits"` object: keys left out keep their defaults,
    null turns one off. Raises ConfigError for anything else than that object of numbers."""
    if given is None:
        return UpstreamLimits()
    if type(given) is not dict:
        raise ConfigError(server, LIMITS_KEY, "must be an object of limits")
    unknown = sorted(set(given) - set(_CONFIG_FIELDS))
    if unknown:
        known = ", ".join(_CONFIG_FIELDS)
        raise ConfigError(server, LIMITS_KEY, f"unknown {', '.join(unknown)} (known: {known})")
    for key, value in given.items():
        number = int if key in _WHOLE else (int, float)
        if value is not None and (type(value) is bool or not isinstance(value, number)):
            kind = "a whole number" if key in _WHOLE else "a number"
            raise ConfigError(server, LIMITS_KEY, f"{key} must be {kind} or null")
    try:
        return UpstreamLimits(**{_CONFIG_FIELDS[key]: value for key, value in given.items()})
    except ValueError as exc:  # not positive
        raise ConfigError(server, LIMITS_KEY, str(exc)) from None


class UpstreamGuard:
    """The limits of one upstream, as the proxy applies them."""

    def __init__(self, limits: UpstreamLimits, clock: Callable[[], float] = time.monotonic) -> None:
        self.limits = limits
        self.clock = clock
        self._bucket = _TokenBucket(limits.rate, limits.burst, clock) if limits.rate else None
        places = limits.max_in_flight
        self._places = asyncio.Semaphore(places) if places is not None else None

    @contextlib.asynccontextmanager
    async def call(self, server: str | None) -> AsyncIterator[None]:
        """Hold a place for one upstream call. Raises ProtocolError -32603 when the rate is
        exceeded; waits while `max_in_flight` calls are going on."""
        if self._bucket is not None:
            wait = self._bucket.take()
            if wait > 0:
                raise ProtocolError(
                    INTERNAL_ERROR,
                    f"{_which(server)} is rate limited ({self.limits.rate:g} requests/s); "
                    "try again later",
                    {"retryAfter": round(wait, 3)},
                )
        if self._places is None:
            yield
            return
        async with self._places:
            yield

    def check_size(self, result: JSONObject, server: str | None) -> None:
        """Raises ProtocolError -32603 when `result` as JSON is over `max_result_bytes`."""
        limit = self.limits.max_result_bytes
        if limit is None:
            return
        size = _json_size(result)  # orjson: a tenth of a walk over the answer's items
        if size > limit:
            logger.warning("an answer of %d+ bytes from %s dropped", size, _which(server))
            raise ProtocolError(
                INTERNAL_ERROR,
                f"{_which(server)} answered {size} bytes or more, over the proxy's limit "
                f"of {limit}",
            )

    def metered(self, notify: Notify | None, on_flood: Callable[[], None]) -> Notify | None:
        """`notify` passing at most `max_notifications_per_second`; the first one over calls
        `on_flood` (once) and the rest of that second are dropped."""
        cap = self.limits.max_notifications_per_second
        if cap is None or notify is None:
            return notify
        meter = _Meter(cap, self.clock)
        flooded = False

        def passing(method: str, params: JSONObject | None) -> Awaitable[None] | None:
            nonlocal flooded
            if meter.allow():
                return notify(method, params)
            if not flooded:
                flooded = True
                on_flood()
            return None

        return passing


class _TokenBucket:
    def __init__(self, rate: float, burst: int | None, clock: Callable[[], float]) -> None:
        self.rate = rate
        self.size = float(burst if burst is not None else max(1, math.ceil(rate)))
        self.tokens = self.size
        self.clock = clock
        self.at = clock()

    def take(self) -> float:
        """Take a token: 0.0, or (none left) the seconds until one comes."""
        now = self.clock()
        self.tokens = min(self.size, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens >= 1:
            self.tokens -= 1
            return 0.0
        return (1 - self.tokens) / self.rate


class _Meter:
    """Counts events in the current one-second window."""

    def __init__(self, cap: int, clock: Callable[[], float]) -> None:
        self.cap = cap
        self.clock = clock
        self.window = clock()
        self.count = 0

    def allow(self) -> bool:
        now = self.clock()
        if now - self.window >= 1.0:
            self.window, self.count = now, 0
        self.count += 1
        return self.count <= self.cap


def _json_size(value: Any) -> int:
    """`value`'s size as the proxy sends it on (orjson, compact UTF-8); json for what orjson
    refuses (an integer past 64 bits)."""
    try:
        return len(orjson.dumps(value))
    except orjson.JSONEncodeError:
        return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


def _which(server: str | None) -> str:
    return "the upstream server" if server is None else f"the upstream server {server!r}"


__all__ = ["UpstreamLimits", "UpstreamGuard"]
