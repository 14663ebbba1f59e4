"""`ClientOptions`: everything a `Client` is configured with, in one frozen value.

`Client(target, timeout=10, sampling=...)` builds one from its keyword arguments;
`Client.with_options(target, options)` takes one made beforehand, so an application that opens
many clients (a host) configures them once and varies what differs with
`dataclasses.replace`. What each option does: see `Client`; `clock` (seconds, default
`time.monotonic`) is what the 2026-07-28 result cache reads for freshness (`ttlMs`): a test
passes a fake one to let a cached result go stale without waiting.

`ClientKeywords` types the same options given as keyword arguments (a host's
`client_options=`, `mcpkit.testing.connect(server, **options)`), so mypy refuses a wrong one.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypedDict

from mcpkit._version import __version__
from mcpkit.client._targets import HTTPAuth, HTTPOptions
from mcpkit.client.era import DEFAULT_PROBE_TIMEOUT
from mcpkit.client.handlers import (
    Elicitation,
    ElicitationHandler,
    RootsSource,
    Sampling,
    SamplingHandler,
)
from mcpkit.client.mrtr import DEFAULT_MAX_INPUT_ROUNDS
from mcpkit.client.notifications import (
    ListChangedHandler,
    LogHandler,
    NotificationHandler,
    ResourceUpdatedHandler,
)
from mcpkit.client.pagination import DEFAULT_MAX_PAGES


@dataclass(frozen=True, slots=True)
class ClientOptions:
    name: str = "mcpkit"
    version: str = __version__
    timeout: float | None = 60.0
    env: dict[str, str] | None = None
    cwd: str | os.PathLike[str] | None = None
    stderr: Callable[[str], None] | None = None
    protocol_version: str | None = None
    http: HTTPOptions | None = None
    auth: HTTPAuth | None = None
    sampling: Sampling | SamplingHandler | None = None
    elicitation: Elicitation | ElicitationHandler | None = None
    roots: RootsSource | None = None
    on_log: LogHandler | None = None
    on_list_changed: ListChangedHandler | None = None
    on_resource_updated: ResourceUpdatedHandler | None = None
    on_notification: NotificationHandler | None = None
    max_pages: int = DEFAULT_MAX_PAGES
    mode: str | None = None
    probe_timeout: float = DEFAULT_PROBE_TIMEOUT
    cache: bool = True
    max_input_rounds: int = DEFAULT_MAX_INPUT_ROUNDS
    clock: Callable[[], float] = time.monotonic
    apps: bool = False
    telemetry: bool = True


class ClientKeywords(TypedDict, total=False):
    """`Client`'s keyword arguments, for code that passes them on (`ClientOptions`' fields)."""

    name: str
    version: str
    timeout: float | None
    env: dict[str, str] | None
    cwd: str | os.PathLike[str] | None
    stderr: Callable[[str], None] | None
    protocol_version: str | None
    http: HTTPOptions | None
    auth: HTTPAuth | None
    sampling: Sampling | SamplingHandler | None
    elicitation: Elicitation | ElicitationHandler | None
    roots: RootsSource | None
    on_log: LogHandler | None
    on_list_changed: ListChangedHandler | None
    on_resource_updated: ResourceUpdatedHandler | None
    on_notification: NotificationHandler | None
    max_pages: int
    mode: str | None
    probe_timeout: float
    cache: bool
    max_input_rounds: int
    clock: Callable[[], float]
    apps: bool
    telemetry: bool
