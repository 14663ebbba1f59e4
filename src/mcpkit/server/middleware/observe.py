"""`RequestLogging` and `RequestTiming`: what came in, from whom, how it ended, how long it took."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from mcpkit.errors import ProtocolError
from mcpkit.server.middleware.base import CallNext, Middleware, MiddlewareContext

__all__ = ["Durations", "RequestLogging", "RequestTiming"]


class RequestLogging(Middleware):
    """One log line per request and notification: method, tool/prompt name or URI, who
    (principal key), session, era, outcome (ok, error code, tool error) and milliseconds.

    `logger` (default "mcpkit.requests"), `level` (default INFO). `include_params`: add the
    params (off by default: arguments may hold personal data or secrets)."""

    def __init__(
        self,
        logger: logging.Logger | None = None,
        *,
        level: int = logging.INFO,
        include_params: bool = False,
    ) -> None:
        self.logger = logger or logging.getLogger("mcpkit.requests")
        self.level = level
        self.include_params = include_params

    async def on_message(self, mctx: MiddlewareContext, call_next: CallNext) -> Any:
        if not self.logger.isEnabledFor(self.level):
            return await call_next(mctx)
        outcome = "ok"
        try:
            result = await call_next(mctx)
        except ProtocolError as exc:
            outcome = f"error {exc.code}"
            raise
        except BaseException as exc:
            outcome = f"failed {type(exc).__name__}"
            raise
        else:
            if type(result) is dict and result.get("isError") is True:
                outcome = "tool error"
            return result
        finally:
            self._log(mctx, outcome)

    def _log(self, mctx: MiddlewareContext, outcome: str) -> None:
        principal = mctx.principal
        target = mctx.name or mctx.params.get("uri")
        line = "%s %s%s principal=%s session=%s era=%s -> %s in %.1f ms"
        args: list[Any] = [
            mctx.kind,
            mctx.method,
            "" if target is None else f" {target}",
            None if principal is None else principal.key,
            mctx.session_id,
            mctx.era.value,
            outcome,
            mctx.elapsed * 1000,
        ]
        if self.include_params:
            line += " params=%r"
            args.append(mctx.params)
        self.logger.log(self.level, line, *args)


@dataclass
class Durations:
    """How long one method's requests took: `count`, `total` and `longest` (seconds)."""

    count: int = 0
    total: float = 0.0
    longest: float = 0.0

    @property
    def mean(self) -> float:
        return self.total / self.count if self.count else 0.0


class RequestTiming(Middleware):
    """Time every request: `timing.durations[method]` (a `Durations`), and a DEBUG line on
    `logger` (default "mcpkit.timing") per request. Failed requests count too."""

    def __init__(self, logger: logging.Logger | None = None) -> None:
        self.logger = logger or logging.getLogger("mcpkit.timing")
        self.durations: dict[str, Durations] = {}

    async def on_request(self, mctx: MiddlewareContext, call_next: CallNext) -> Any:
        try:
            return await call_next(mctx)
        finally:
            elapsed = mctx.elapsed
            durations = self.durations.get(mctx.method)
            if durations is None:
                durations = self.durations[mctx.method] = Durations()
            durations.count += 1
            durations.total += elapsed
            durations.longest = max(durations.longest, elapsed)
            self.logger.debug("%s took %.2f ms", mctx.method, elapsed * 1000)
