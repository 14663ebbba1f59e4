"""An MCP HTTP app served by uvicorn, in one process or in N worker processes sharing one
listening socket, each draining on SIGTERM before it closes its socket (`DrainingServer`).

`server.run(transport="http")`, `mcpkit run --transport http [--workers N]` and `mcpkit proxy
--transport http [--workers N]` all serve through `serve`. With N workers this module's own
supervisor starts them (uvicorn's no longer lets a caller choose the server class each
worker runs): it forwards SIGTERM and SIGINT to every worker as SIGTERM, starts a new worker
in place of one that dies, stops them all when one fails to start, and returns once all have
exited.

uvicorn's access lines name the request's path without its query string (`DropQuery`,
in text and JSON log formats alike): a query may carry what must not be logged (a legacy
HTTP+SSE `session_id`, a token a misbehaving client put there), and a path is all an access
line needs.

Imported only when a server is served (it imports uvicorn: the 'http' extra).
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import signal
import socket
import threading
from multiprocessing.process import BaseProcess
from types import EllipsisType
from typing import Any

import uvicorn
from uvicorn.config import STARTUP_FAILURE

from mcpkit.transports.http.app import MCPHTTPApp

__all__ = ["DrainingServer", "DropQuery", "listening_socket", "serve"]

logger = logging.getLogger("uvicorn.error")
_ACCESS_PATH = 2  # uvicorn.access's arguments: client, method, path with query, version, status


class DropQuery(logging.Filter):
    """An access line's path without its query string (module docstring)."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) > _ACCESS_PATH:
            path = args[_ACCESS_PATH]
            if isinstance(path, str) and "?" in path:
                trimmed = list(args)
                trimmed[_ACCESS_PATH] = path.partition("?")[0]
                record.args = tuple(trimmed)
        return True


def _drop_queries() -> None:
    """On the access logger itself, so every handler (uvicorn's text one, the JSON one) gets
    the trimmed line; once per process."""
    access = logging.getLogger("uvicorn.access")
    if not any(isinstance(f, DropQuery) for f in access.filters):
        access.addFilter(DropQuery())


class DrainingServer(uvicorn.Server):
    """uvicorn's server, which on SIGTERM first drains the MCP app it serves (`MCPHTTPApp.drain`:
    readiness 503, new sessions and streams refused, long-lived responses ended gracefully,
    requests in flight waited for) and only then closes its socket and waits for what is
    still open, at most `timeout_graceful_shutdown` s."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        _drop_queries()

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        app = _mcp_app(self.config.loaded_app)
        if app is not None:
            await app.drain()
        await super().shutdown(sockets)


def _mcp_app(loaded: Any) -> MCPHTTPApp | None:
    """The MCP app inside what uvicorn serves (its middlewares keep the app they wrap in
    `.app`); the same whether the app was given or a worker's factory built it."""
    while loaded is not None and not isinstance(loaded, MCPHTTPApp):
        loaded = getattr(loaded, "app", None)
    return loaded


def serve(
    app: Any,
    *,
    host: str,
    port: int,
    workers: int = 1,
    drain_timeout: float = 5.0,
    log_level: str = "warning",
    log_config: dict[str, Any] | EllipsisType | None = ...,  # ...: uvicorn's own
) -> None:
    """Serve `app` (with `workers` > 1: the "module:factory" that builds it in each worker)
    until SIGTERM or SIGINT, then drain. Raises OSError naming the address when it cannot
    be listened on; exits with uvicorn's startup-failure status (3) when a worker fails to
    start (its error is logged)."""
    sock = listening_socket(host, port)
    logging_given: dict[str, Any] = {} if log_config is ... else {"log_config": log_config}
    # SIGTERM: drain() waits up to drain_timeout for the requests in flight; uvicorn's own
    # wait for open responses (streams a client reopened meanwhile) gets as long again,
    # after which it cancels them: a process ends within about twice drain_timeout.
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        factory=workers > 1,
        workers=workers,
        log_level=log_level,
        lifespan="on",
        timeout_graceful_shutdown=max(1, round(drain_timeout)),
        **logging_given,
    )
    if workers == 1:
        DrainingServer(config).run(sockets=[sock])
    else:
        _supervise(config, sock, workers)


def listening_socket(host: str, port: int) -> socket.socket:
    """The socket to serve on, bound here so that a port in use is an OSError naming it
    (uvicorn would log its own error line and exit). Raises OSError."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP named, not 0: asyncio sets TCP_NODELAY only on sockets that say TCP, and
    # without it every answer waits ~40 ms for Nagle and the peer's delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        refused = OSError(f"cannot listen on {host}:{port}: {exc.strerror}")
        refused.errno = exc.errno
        raise refused from None
    return sock


def _supervise(config: uvicorn.Config, sock: socket.socket, count: int) -> None:
    """`count` workers on `sock` until SIGTERM or SIGINT; then each drains, and this returns
    once all have exited (module docstring)."""
    stop = threading.Event()
    previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in _STOPPING}
    workers = [_start(config, sock) for _ in range(count)]
    failed = False
    try:
        while not failed and not stop.wait(0.5):
            failed = _replace_dead(workers, config, sock)
    finally:
        for worker in workers:
            if worker.exitcode is None and worker.pid is not None:
                os.kill(worker.pid, signal.SIGTERM)  # each drains, as one process does
        # no worker to start any more: the port stops taking connections once the last
        # worker has drained and closed its copy (not queued until all have exited)
        sock.close()
        for worker in workers:
            worker.join()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if failed:
        raise SystemExit(STARTUP_FAILURE)


_STOPPING = (signal.SIGTERM, signal.SIGINT)


def _replace_dead(workers: list[BaseProcess], config: uvicorn.Config, sock: socket.socket) -> bool:
    """Start a new worker in place of each one that died; True when one failed to start
    (the app or its state is broken: a new one would fail the same way)."""
    for index, worker in enumerate(workers):
        if worker.exitcode is None:
            continue
        if worker.exitcode == STARTUP_FAILURE:
            logger.error("worker process %s failed to start: stopping", worker.pid)
            return True
        logger.warning(
            "worker process %s exited (%s): starting another", worker.pid, worker.exitcode
        )
        workers[index] = _start(config, sock)
    return False


def _start(config: uvicorn.Config, sock: socket.socket) -> BaseProcess:
    # spawn, not fork: a worker is a new interpreter, with no event loop or thread of ours
    worker = multiprocessing.get_context("spawn").Process(
        target=_work, args=(config, [sock]), name="mcpkit-worker"
    )
    worker.start()
    return worker


def _work(config: uvicorn.Config, sockets: list[socket.socket]) -> None:
    """A worker process: uvicorn's logging set up again here, then the draining server
    (which builds the app with the factory)."""
    config.configure_logging()
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C: uvicorn raises it again once done
        DrainingServer(config).run(sockets=sockets)
