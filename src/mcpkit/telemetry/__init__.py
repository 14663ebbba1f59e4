"""OpenTelemetry traces and metrics for MCP, as the semantic conventions for MCP define them.

How this works. mcpkit never configures OpenTelemetry: it uses the global tracer and meter
providers, so an application that sets up the SDK (or runs under `opentelemetry-instrument`)
gets mcpkit's spans and metrics with no mcpkit-specific code. Until a provider is set nothing
is imported and nothing is recorded: `current()` asks the API modules the application
already imported for their global providers (`get_tracer_provider()`, `get_meter_provider()`)
and takes the API's own (its proxy, its no-op) for none, so a server or client with no SDK
pays a few function calls per request, and one that never imported opentelemetry a dict
lookup. Once a provider appears, `current()` returns the
`Instrumentation` (mcpkit.telemetry._otel, which imports opentelemetry-api) for good.

Turned off for the process by `MCPKIT_OTEL=off` (also `0`, `false`, `no`), per server by
`Server(telemetry=False)`, per client by `Client(..., telemetry=False)`.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcpkit.telemetry._otel import Instrumentation

__all__ = ["current", "disabled_by_env", "reset"]

_OFF_VALUES = frozenset({"off", "0", "false", "no"})


def disabled_by_env() -> bool:
    """Whether `MCPKIT_OTEL` turns telemetry off for this process."""
    return os.environ.get("MCPKIT_OTEL", "").strip().lower() in _OFF_VALUES


class _State:
    __slots__ = ("found", "off")

    def __init__(self) -> None:
        self.found: Instrumentation | None = None
        self.off = disabled_by_env()


_state = _State()


_modules = sys.modules


def current() -> Instrumentation | None:
    """The instrumentation to record with, or None: telemetry is off, or no tracer or meter
    provider has been set (nothing would be recorded)."""
    # Called for every request: an application that never imported opentelemetry pays one
    # dict lookup here.
    found = _state.found
    if found is None and "opentelemetry" in _modules and not _state.off:
        return _probe()
    return found


def _probe() -> Instrumentation | None:
    # A provider can only have been set through a module the application imported already;
    # asked through the API's public getters, never its private globals.
    trace = sys.modules.get("opentelemetry.trace")
    metrics = sys.modules.get("opentelemetry.metrics")
    traced = trace is not None and _records(trace.get_tracer_provider(), trace.__name__)
    measured = metrics is not None and _records(metrics.get_meter_provider(), metrics.__name__)
    if not (traced or measured):
        return None
    return _start()


def _records(provider: object, api: str) -> bool:
    """Whether `provider` is a real one (the SDK's, a vendor's): not one of the API's own,
    the proxy it hands out until a provider is set and its no-op, which record nothing. The
    API names its tracer proxy (`ProxyTracerProvider`) but not its meter proxy, so the test
    is where the class is defined: in the API's module itself."""
    module = type(provider).__module__
    return module != api and not module.startswith(api + ".")


def _start() -> Instrumentation:
    from mcpkit.telemetry._otel import Instrumentation

    found = _state.found = Instrumentation()
    return found


def reset() -> None:
    """Forget the instrumentation and read `MCPKIT_OTEL` again (tests that switch
    providers or the variable within one process)."""
    _state.found = None
    _state.off = disabled_by_env()
