"""`Inspector` (the inspector as an object: serve it, connect it) and `run_inspector` (the
blocking form `mcpkit inspect` calls).

The page's URL carries a fresh token (guard.py); the server listens on 127.0.0.1 only, on a
socket bound here so that the port (which the Host and Origin checks need) is known before the
first request. uvicorn comes from the `http` extra and is imported only when serving.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from mcpkit.inspector.app import InspectorApp
from mcpkit.inspector.connection import InspectedServer, default_resolve
from mcpkit.inspector.guard import Guard, new_token
from mcpkit.inspector.history import History
from mcpkit.inspector.launch import opened_in_browser, terminate_as_interrupt
from mcpkit.inspector.sandbox import SandboxApp, quiet_server
from mcpkit.inspector.views import Views

JSONObject = dict[str, Any]
LOOPBACK = "127.0.0.1"
GRACE = 3  # seconds a request still running (a slow tool call) may take once stopping


class Inspector:
    """The web inspector: `async with inspector.serving() as url:` serves the page at `url`
    (token included) and connects to `target` when one was given.

    `target`: what `mcpkit.Client` takes as a string or argv (a URL, a command line, an argv
    list, a Python file as `resolve` turns it into a command: by default `python -m mcpkit run
    FILE`), or "config.json#name" for a server of an `mcpServers` file; None to choose one in
    the page. `mode`: "auto", "handshake" (its old name "legacy" still accepted) or
    "per-request". `record`: a file the
    session's messages are written to (JSON lines, docs/inspector.md). `client_options`:
    keyword arguments for the `Client` (timeout, env, http=HTTPOptions(...), ...). `oauth`:
    log in to a protected HTTP server with `mcpkit.auth.client.OAuth` (stored tokens, else
    the browser) unless the options bring credentials; False never does; a callable returns
    the `OAuth` to use for each connection.
    """

    def __init__(
        self,
        target: str | list[str] | None = None,
        *,
        mode: str = "auto",
        record: Path | str | None = None,
        client_options: JSONObject | None = None,
        resolve: Callable[[str], Any] | None = None,
        oauth: bool | Callable[[], Any] = True,
    ) -> None:
        self.target = target
        self.mode = mode
        self.token = new_token()
        self.history = History(Path(record) if record is not None else None)
        self.connection = InspectedServer(
            self.history, client_options, resolve or default_resolve, oauth=oauth
        )
        self.guard = Guard(self.token)
        self.views = Views(self.connection, self.history)
        self.app = InspectorApp(self.guard, self.connection, self.history, self.views)
        self.sandbox = SandboxApp(self.views)  # MCP Apps views, on a port of their own
        self._server_task: asyncio.Task[None] | None = None

    async def connect(self, target: str | list[str], mode: str = "auto") -> JSONObject:
        """Connect (closing the connection there is): the new state, as /api/state shows it.
        Raises ValueError for an unknown mode; a failure to connect is the state's "error"."""
        return await self.connection.connect(target, mode)

    async def disconnect(self) -> JSONObject:
        return await self.connection.disconnect()

    def state(self) -> JSONObject:
        return self.connection.state()

    @contextlib.asynccontextmanager
    async def serving(self, host: str = LOOPBACK, port: int = 0) -> AsyncIterator[str]:
        """Serve on 127.0.0.1:`port` (0: any free port) for the block; yields the page's URL
        with its token. The initial target is connected in the background (the page shows
        it; `state()` says when). Raises ValueError for another host, OSError when the port
        cannot be bound, ImportError naming the `http` extra without uvicorn."""
        if host != LOOPBACK:
            raise ValueError("the inspector listens on 127.0.0.1 only")
        from mcpkit._extras import optional_dependency

        with optional_dependency():
            import uvicorn

            from mcpkit.transports.http.serving import listening_socket

        sock = listening_socket(LOOPBACK, port)
        sandbox_sock = listening_socket(LOOPBACK, 0)
        self.guard.port = sock.getsockname()[1]
        self.sandbox.configure(sandbox_sock.getsockname()[1], self.guard.port)
        server = uvicorn.Server(_config(uvicorn, self.app))
        sandbox = quiet_server(uvicorn, _config(uvicorn, self.sandbox))
        self._server_task = asyncio.create_task(server.serve(sockets=[sock]))
        sandbox_task = asyncio.create_task(sandbox.serve(sockets=[sandbox_sock]))
        initial = None
        try:
            await _started(server, self._server_task)
            await _started(sandbox, sandbox_task)
            if self.target is not None:
                initial = asyncio.create_task(self.connect(self.target, self.mode))
            yield f"http://{LOOPBACK}:{self.guard.port}/?token={self.token}"
        finally:
            if initial is not None:
                initial.cancel()
            await self.connection.close()
            self.history.end_streams()
            server.should_exit = sandbox.should_exit = True
            with contextlib.suppress(asyncio.CancelledError):
                await self._server_task
            with contextlib.suppress(asyncio.CancelledError):
                await sandbox_task
            sock.close()
            sandbox_sock.close()

    async def wait_closed(self) -> None:
        """Wait until the server stops (Ctrl-C: uvicorn's signal handling ends it)."""
        if self._server_task is not None:
            await asyncio.shield(self._server_task)


def run_inspector(
    target: str | list[str] | None,
    *,
    port: int = 0,
    open_browser: bool = True,
    mode: str = "auto",
    record: Path | str | None = None,
    client_options: JSONObject | None = None,
    on_ready: Callable[[str], None] | None = None,
    resolve: Callable[[str], Any] | None = None,
) -> None:
    """Serve the inspector until Ctrl-C: prints "mcpkit inspector: URL" (the token included),
    calls `on_ready(url)`, opens the browser unless `open_browser` is false (on a file only
    this user reads that redirects to the URL: launch.py). Raises what `Inspector.serving`
    raises."""
    inspector = Inspector(
        target, mode=mode, record=record, client_options=client_options, resolve=resolve
    )

    async def main() -> None:
        async with inspector.serving(port=port) as url:
            print(f"mcpkit inspector: {url}", flush=True)
            if on_ready is not None:
                on_ready(url)
            with contextlib.ExitStack() as opened:
                if open_browser:  # through a private file: no token on a command line
                    opened.enter_context(opened_in_browser(url))
                await inspector.wait_closed()

    with terminate_as_interrupt(), contextlib.suppress(KeyboardInterrupt):
        asyncio.run(main())


def _config(uvicorn: Any, app: Any) -> Any:
    return uvicorn.Config(
        app, log_level="warning", lifespan="off", ws="none", timeout_graceful_shutdown=GRACE
    )


async def _started(server: Any, task: asyncio.Task[None]) -> None:
    # uvicorn says it is up through a flag only; the socket already listens, so this is short
    while not server.started:
        if task.done():
            task.result()  # startup failed: raise its error
            raise OSError("the inspector's server stopped at startup")
        await asyncio.sleep(0.005)
