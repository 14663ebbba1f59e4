"""Keeping many servers connected: each in its own client, none able to hold up the others.

How this works. `HostServers` runs one `_Slot` per configured server, each an asyncio task
with a client of its own: it connects (bounded by `connect_timeout`), is `ready`, and waits
for the connection to end. A server that cannot start (command missing, hangs in its
handshake) is `failed` with the reason and costs the others nothing: they connect at the same
time. A server that goes away once ready is `restarting` as soon as that is known: its client's
`wait_closed()` returned (a stdio server exited, an HTTP transport saw its server go), or a
call routed through the host raised `ConnectionClosed` (`connection_lost`; an HTTP server is
often found gone only by the next request). It is connected again after a backoff that
doubles from `restart_delay` up to `max_delay`, for as long as it takes unless `max_restarts`
says how many attempts in a row to make (then `failed`). `disable(name)` closes a server and
keeps it configured; `enable(name)` starts it again. Each change of state is told to
`status_listeners` (a front end shows it; a test awaits it).

What a server asks or tells the host goes to callbacks that are told which server it is:
`sampling` and `elicitation` get `(server, params)`, wherever they are given (`labelled.py`),
so a person (or a policy) always sees who wants what, and no server can pass itself off as
another. A server's log messages are kept in a
bounded buffer of its own (`logs(name)`), so a server that floods them costs memory for the
last `log_limit` lines and nothing else.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import logging
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from mcpkit.client import Client, ClientKeywords, Era, HTTPAuth
from mcpkit.errors import ConnectionClosed, MCPError
from mcpkit.host import labelled
from mcpkit.host.config import HostConfig, ServerConfig
from mcpkit.host.labelled import LabelledHandler

logger = logging.getLogger("mcpkit.host")
JSONObject = dict[str, Any]


class ServerState(StrEnum):
    CONNECTING = "connecting"
    READY = "ready"
    RESTARTING = "restarting"
    FAILED = "failed"
    DISABLED = "disabled"


@dataclass(frozen=True, slots=True)
class ServerStatus:
    """Where one server stands: its state, why it failed (or last went away), restarts."""

    name: str
    state: ServerState
    error: str | None = None
    restarts: int = 0


class ServerUnavailable(MCPError):
    """The server is not ready (failed, disabled, restarting): its status says why."""

    def __init__(self, status: ServerStatus) -> None:
        reason = f": {status.error}" if status.error else ""
        super().__init__(f"server {status.name!r} is {status.state.value}{reason}")
        self.status = status


@dataclass(frozen=True, slots=True)
class Timing:
    """How long connecting may take, and the reconnection backoff (seconds).

    A server that was ready and went away is connected again after `restart_delay`, then
    after twice as long each time up to `max_delay`: with the defaults, attempts 0.5, 1, 2,
    4, 8, 16 s apart, then every 30 s. `max_restarts`: attempts in a row before it is
    `failed` for good; None (the default) keeps trying, since a remote server that restarts
    or a network that drops for a minute should not need the user to step in. A server that
    never got ready is not retried on its own (`enable` tries again)."""

    connect_timeout: float = 30.0
    restart_delay: float = 0.5
    max_delay: float = 30.0
    max_restarts: int | None = None


class HostServers:
    """The configured servers, connected concurrently (see the module docstring).

    `client_options` are keyword arguments every `Client` gets (timeout, ...), under each
    server's own (env, cwd, headers, roots). `sampling` / `elicitation`: handlers called
    `(server, params)`, given here or in `client_options` (there also as a `Sampling` /
    `Elicitation` saying which modes to offer); the `on_*` callbacks of `client_options` get
    the server first too (`mcpkit.host.labelled`). A server is offered sampling (with tools
    and context) or elicitation (form and URL) only when a handler is given. Raises TypeError
    for a callback that cannot take those arguments, or a handler given both ways.
    `log_level`: the level of log messages asked of each server (None: ask for none); the last
    `log_limit` are kept.
    `auth(server_config)`: the `httpx.Auth` for a remote server (e.g. an `OAuth()` of its own:
    one serves one server), or None; not asked for a server whose configured headers already
    carry an Authorization.

    `start` and `enable` never raise for a server that fails: its status says why (`status`),
    and `client(name)` then raises ServerUnavailable (KeyError for a name not configured).
    """

    def __init__(
        self,
        config: HostConfig,
        *,
        timing: Timing | None = None,
        client_options: ClientKeywords | None = None,
        sampling: LabelledHandler | None = None,
        elicitation: LabelledHandler | None = None,
        log_limit: int = 200,
        log_level: str | None = "info",
        auth: Callable[[ServerConfig], HTTPAuth | None] | None = None,
    ) -> None:
        self.config = config
        self.timing = timing or Timing()
        self._options: dict[str, Any] = dict(client_options or {})
        self._callbacks = labelled.collect(self._options, sampling, elicitation)
        self.log_level = log_level
        self._auth = auth
        self._slots = {name: _Slot(self, server) for name, server in config.servers.items()}
        self._logs: dict[str, deque[JSONObject]] = {
            name: deque(maxlen=log_limit) for name in config.servers
        }
        # Told (server, "tools" | "prompts" | "resources") when a server's list changed.
        self.list_listeners: list[Callable[[str, str], None]] = []
        # Told a server's new status whenever its state changes.
        self.status_listeners: list[Callable[[ServerStatus], None]] = []

    async def start(self) -> None:
        """Start every enabled server at once; return when each is ready or has failed."""
        slots = [slot for slot in self._slots.values() if not slot.config.disabled]
        for slot in slots:
            slot.start()
        await asyncio.gather(*(slot.settled.wait() for slot in slots))

    def status(self) -> dict[str, ServerStatus]:
        """Every configured server's status, in configuration order (read errors included)."""
        found = {name: slot.status() for name, slot in self._slots.items()}
        for name, error in self.config.errors.items():
            found[name] = ServerStatus(name, ServerState.FAILED, str(error))
        return found

    def client(self, name: str) -> Client:
        """The ready client of `name`. Raises KeyError (not configured), ServerUnavailable."""
        slot = self._slots.get(name)
        if slot is None:
            raise KeyError(f"no server named {name!r} is configured")
        if slot.client is None or slot.state is not ServerState.READY:
            raise ServerUnavailable(slot.status())
        return slot.client

    def ready(self) -> dict[str, Client]:
        return {
            name: slot.client
            for name, slot in self._slots.items()
            if slot.client is not None and slot.state is ServerState.READY
        }

    def connection_lost(self, name: str, client: Client, reason: str) -> None:
        """A call on `client` (of server `name`) raised ConnectionClosed: take the server for
        gone now (`restarting`) instead of when its client notices on its own. Does nothing
        when `client` is no longer the server's ready client (it was replaced or closed)."""
        slot = self._slots.get(name)
        if slot is not None:
            slot.lost(client, reason)

    async def enable(self, name: str) -> ServerStatus:
        """Start a disabled (or failed) server; its status once ready or failed (a failure
        is in the status, not raised). Raises KeyError for a server not configured."""
        slot = self._slots[name]
        await slot.stop()
        slot.start()
        await slot.settled.wait()
        return slot.status()

    async def disable(self, name: str) -> None:
        """Close a server and keep it configured (`enable` starts it again). Raises KeyError
        for a server not configured."""
        await self._slots[name].stop()

    def logs(self, name: str) -> list[JSONObject]:
        """The server's latest log messages (`level`, `logger`, `data`), oldest first.
        Raises KeyError for a server not configured."""
        return list(self._logs[name])

    async def aclose(self) -> None:
        await asyncio.gather(*(slot.stop() for slot in self._slots.values()))

    def _client_for(self, config: ServerConfig) -> Client:
        options = {**self._options, **config.client_options()}
        name = config.name
        if self._auth is not None and config.transport != "stdio":
            headers = {k.lower() for k in config.headers}
            auth = None if "authorization" in headers else self._auth(config)
            if auth is not None:
                options["http"] = dataclasses.replace(options["http"], auth=auth)
        for option, callback in self._callbacks.items():
            options[option] = labelled.for_server(callback, name)
        options["on_log"] = functools.partial(self._log, name, options.get("on_log"))
        theirs = options.get("on_list_changed")

        def on_list_changed(kind: str) -> Any:
            for listener in self.list_listeners:
                listener(config.name, kind)
            return None if theirs is None else theirs(kind)

        options["on_list_changed"] = on_list_changed
        return Client(config.target, **options)

    def _log(self, server: str, theirs: Any, params: Any) -> Any:
        self._logs[server].append(
            {"level": params.level, "logger": params.logger, "data": params.data}
        )
        return None if theirs is None else theirs(params)


class _Slot:
    """One server's connection, kept up by its own task."""

    def __init__(self, host: HostServers, config: ServerConfig) -> None:
        self.host = host
        self.config = config
        self.state = ServerState.DISABLED
        self.error: str | None = None
        self.restarts = 0
        self.client: Client | None = None
        self.settled = asyncio.Event()  # ready or failed, for `start`
        self._task: asyncio.Task[None] | None = None
        self._lost: asyncio.Future[str] | None = None  # resolved by `lost` while ready

    def status(self) -> ServerStatus:
        return ServerStatus(self.config.name, self.state, self.error, self.restarts)

    def start(self) -> None:
        self.settled.clear()
        self.restarts, self.error = 0, None
        self._set(ServerState.CONNECTING)
        self._task = asyncio.get_running_loop().create_task(self._keep_up())

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self._drop_client()
        self._set(ServerState.DISABLED)
        self.settled.set()

    def lost(self, client: Client, reason: str) -> None:
        """A call found `client` gone: restarting now, reconnected by `_keep_up`."""
        if client is not self.client or self.state is not ServerState.READY:
            return
        if self._lost is not None and not self._lost.done():
            self._lost.set_result(reason)
        self.error = reason
        self._set(ServerState.RESTARTING)

    def _set(self, state: ServerState) -> None:
        if state is not self.state:
            self.state = state
            self._tell()

    def _tell(self) -> None:
        status = self.status()
        for listener in list(self.host.status_listeners):
            try:
                listener(status)
            except Exception:  # a front end's bug must not stop the server being kept up
                logger.exception("a status listener failed on %s", status)

    async def _keep_up(self) -> None:
        timing, name = self.host.timing, self.config.name
        delay, attempts = timing.restart_delay, 0  # attempts: restarts in a row
        while True:
            client = self.host._client_for(self.config)
            try:
                await asyncio.wait_for(client.__aenter__(), timing.connect_timeout)
            except asyncio.CancelledError:
                await client.close()
                raise
            except Exception as exc:
                await client.close()
                self.error = _reason(exc, timing.connect_timeout)
                if self.state is ServerState.CONNECTING:
                    logger.info("server %s could not start: %s", name, self.error)
                    self._set(ServerState.FAILED)
                    self.settled.set()
                    return  # a server that never started is not retried on its own
            else:
                delay, attempts = timing.restart_delay, 0
                await self._serve(client)
            if timing.max_restarts is not None and attempts >= timing.max_restarts:
                self._set(ServerState.FAILED)
                return
            self._set(ServerState.RESTARTING)
            await asyncio.sleep(delay)
            delay = min(delay * 2, timing.max_delay)
            attempts += 1
            self.restarts += 1
            self._tell()  # one more attempt, for a front end to show

    async def _serve(self, client: Client) -> None:
        """`client` is ready: offer it until it goes away (its connection ended, or a call
        found it gone: `lost`)."""
        name, loop = self.config.name, asyncio.get_running_loop()
        await self._ask_for_logs(client)
        lost: asyncio.Future[str] = loop.create_future()
        self.client, self._lost = client, lost
        self._set(ServerState.READY)
        self.settled.set()
        logger.info("server %s ready", name)
        watcher = loop.create_task(_watch_lists(client, name, self.lost))
        closed = loop.create_task(client.wait_closed())
        try:
            await asyncio.wait({closed, lost}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            watcher.cancel()
            closed.cancel()
        reason = lost.result() if lost.done() else closed.result()
        if self.state is ServerState.READY:
            self.error = reason
            self._set(ServerState.RESTARTING)
        logger.info("server %s went away: %s", name, reason)
        await self._drop_client()

    async def _ask_for_logs(self, client: Client) -> None:
        level = self.host.log_level
        if level is None or (client.era is Era.HANDSHAKE and not client.supports("logging")):
            return
        try:
            await client.set_logging_level(level)
        except Exception as exc:  # its logs are not worth failing the server for
            logger.info("server %s: no log messages: %s", self.config.name, exc)

    async def _drop_client(self) -> None:
        client, self.client, self._lost = self.client, None, None
        if client is not None:
            with contextlib.suppress(Exception):
                await client.close()


async def _watch_lists(client: Client, name: str, lost: Callable[[Client, str], None]) -> None:
    """A 2026-07-28 server tells of list changes only to a `subscriptions/listen` request:
    keep one open for the lists it says change, so `on_list_changed` hears of them as in the
    handshake era (where they come unasked). Its stream is often the first to see an HTTP
    server go: a ConnectionClosed there is told to `lost`."""
    if client.era is not Era.PER_REQUEST:
        return
    declared = client.server_capabilities
    tools, prompts, resources = (
        bool((declared.get(kind) or {}).get("listChanged"))
        for kind in ("tools", "prompts", "resources")
    )
    if not (tools or prompts or resources):
        return
    try:
        async with client.listen(tools=tools, prompts=prompts, resources=resources) as subscription:
            async for _ in subscription:
                pass  # the client's on_list_changed has run already
    except ConnectionClosed as exc:
        lost(client, str(exc) or "the connection closed")
    except Exception as exc:  # the server ended it: the connection may well be fine
        logger.debug("server %s: list changes not followed: %s", name, exc)


def _reason(exc: BaseException, timeout: float) -> str:
    if isinstance(exc, TimeoutError):
        return f"no answer to the handshake within {timeout:g} s"
    return str(exc) or type(exc).__name__
