"""The inspector's one connection: a client to the target the person chose, observed
(observe.py), answering the server's requests through the person (asks.py), replaced on each
/api/connect.

Targets: an argv list or command line (stdio), an http(s) URL (Streamable HTTP; OAuth login
through `mcpkit.auth.client.OAuth` when the server asks for it), a Python file (started by
`resolve`, by default `python -m mcpkit run FILE`; the CLI passes its own resolution, which
knows other SDKs' files), or "config.json#name", a server of an `mcpServers` configuration.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from mcpkit.client import Elicitation, HTTPOptions, Sampling
from mcpkit.errors import MCPError, ProtocolError
from mcpkit.inspector.asks import Asks
from mcpkit.inspector.history import History
from mcpkit.inspector.observe import InspectorClient, watching_headers
from mcpkit.inspector.task_questions import TaskQuestions

JSONObject = dict[str, Any]
MODES = {"auto": "auto", "legacy": "handshake", "handshake": "handshake",
         "per-request": "per-request"}  # fmt: skip
# A request may wait for the person (an elicitation inside a tool call): longer than a
# program's default 60 s, still bounded so a hung server does not hold the page forever.
DEFAULT_TIMEOUT = 600.0
CONNECT_TIMEOUT = 60.0


def default_resolve(target: str) -> Any:
    """A TARGET string as `Client` takes it: URL as is, `FILE.py[:NAME]` through `mcpkit run`,
    anything else a command line."""
    if "://" in target:
        return target
    file_part = target.partition(":")[0]
    if file_part.endswith(".py") and " " not in target:
        where = str(Path(file_part).resolve())
        name = target[len(file_part) :]
        return [sys.executable, "-m", "mcpkit", "run", where + name]
    return target


def from_config(target: str) -> tuple[Any, JSONObject] | None:
    """("config.json#name") -> that server's target and client options; None for a target
    of another form. Raises ValueError naming what is wrong with the entry or the file."""
    path, sep, name = target.rpartition("#")
    if not sep or not path.endswith(".json") or not name:
        return None
    from mcpkit.host import load_config

    try:
        config = load_config(path)
    except (OSError, ValueError) as exc:
        raise ValueError(f"cannot read {path}: {exc}") from None
    if name in config.errors:
        raise ValueError(str(config.errors[name]))
    server = config.servers.get(name)
    if server is None:
        known = ", ".join(config.servers) or "none"
        raise ValueError(f"no server {name!r} in {path} (servers: {known})")
    return server.target, server.client_options()


class InspectedServer:
    """The client the inspector holds, and what the page sees of it (`state`)."""

    def __init__(
        self,
        history: History,
        client_options: JSONObject | None = None,
        resolve: Callable[[str], Any] = default_resolve,
        oauth: bool | Callable[[], Any] = True,
    ) -> None:
        self.history = history
        self.asks = Asks(history.publish)
        self._task_questions = TaskQuestions(history.publish)
        self.target: str | None = None
        self.mode = "auto"
        self.error: str | None = None
        self.headers: dict[str, str] = {}
        self.connections = 0  # connections made: the page reloads its lists on each new one
        self.reason: str | None = None  # why the last one was made by the program (dev)
        self._options = dict(client_options or {})
        self._resolve = resolve
        self._oauth = oauth
        self._client: InspectorClient | None = None
        self._watch: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()

    @property
    def client(self) -> InspectorClient | None:
        """The connected client, None when not connected (the views' bridges use it)."""
        return self._client

    # -- state -----------------------------------------------------------------------------

    def state(self) -> JSONObject:
        client = self._client
        return {
            "connected": client is not None,
            "target": self.target,
            "mode": self.mode,
            "server": None if client is None else self._server(client),
            "error": self.error,
            "connection": self.connections,
            "reason": self.reason,
        }

    def _server(self, client: InspectorClient) -> JSONObject:
        return {
            "info": client.server_info,
            "capabilities": client.server_capabilities,
            "instructions": client.instructions,
            "era": str(client.era),
            "protocolVersion": client.protocol_version,
            "headers": dict(self.headers),
        }

    def _changed(self) -> None:
        self.history.publish({"type": "state", **self.state()})

    # -- connecting ------------------------------------------------------------------------

    async def connect(
        self, target: str | list[str], mode: str = "auto", reason: str | None = None
    ) -> JSONObject:
        """Close the connection there is and connect to `target`; the new state (a failure is
        its `error`). `reason`: why the program (not the person) connects again, which the
        page shows ("app.py changed: restarted"). Raises ValueError for an unknown mode."""
        if mode not in MODES:
            raise ValueError(f"mode is one of {', '.join(MODES)}, not {mode!r}")
        async with self._lock:
            await self._close()
            self.target = target if isinstance(target, str) else " ".join(target)
            self.mode, self.error, self.headers = mode, None, {}
            self.connections, self.reason = self.connections + 1, reason
            try:
                self.history.start({"target": self.target, "mode": mode})
                self._client = await self._open(target, MODES[mode])
            except (MCPError, OSError, ValueError, TypeError, TimeoutError) as exc:
                self.error = _describe(exc)
            else:
                client = self._client
                self.history.connected(_recorded_server(self._server(client)))
                self._watch = asyncio.create_task(self._watch_closed(client))
            self._changed()
            return self.state()

    async def _open(self, target: str | list[str], mode: str) -> InspectorClient:
        options = {**self._options}
        resolved: Any = target
        if isinstance(target, str):
            configured = from_config(target)
            if configured is None:
                resolved = self._resolve(target)
            else:
                resolved, extra = configured
                options = {**extra, **options}
        if isinstance(resolved, str) and "://" in resolved:
            if self._oauth:
                await self._login(resolved, options)
            self._watch_headers(options)
        asks = self.asks
        options.setdefault("timeout", DEFAULT_TIMEOUT)
        # the person answers sampling and elicitation; roots too, unless configured
        options.pop("sampling", None)
        options.pop("elicitation", None)
        roots = options.pop("roots", None)
        configured_mode = options.pop("mode", None)  # an HTTP+SSE entry says "handshake"
        client = InspectorClient(
            resolved,
            mode=configured_mode if mode == "auto" and configured_mode else mode,
            sampling=Sampling(asks.sampling, tools=True, context=True),
            elicitation=Elicitation(asks.elicitation, form=True, url=True),
            roots=asks.roots if roots is None else roots,
            **options,
        )
        client.observer = self.history.message
        try:
            async with asyncio.timeout(CONNECT_TIMEOUT):  # OAuth login above: not counted
                await client.__aenter__()
        except BaseException:
            await client.close()
            raise
        return client

    async def _login(self, url: str, options: JSONObject) -> None:
        """OAuth for a protected server, as `mcpkit list` logs in: stored tokens, else a login
        in the browser, before the first MCP request. Raises OAuthError."""
        http = options.get("http")
        if options.get("auth") is not None or (http is not None and (http.auth or http.headers)):
            return  # the caller brought credentials
        oauth = self._oauth() if callable(self._oauth) else _default_oauth()
        if await oauth.prepare(url) is not None:
            options["auth"] = oauth

    def _watch_headers(self, options: JSONObject) -> None:
        """The client's HTTP exchanges report their `Mcp-*` headers (the server panel's)."""
        http = options.get("http") or HTTPOptions()
        auth = options.pop("auth", None) or http.auth
        options["http"] = replace(http, auth=watching_headers(auth, self.headers.update))

    async def _watch_closed(self, client: InspectorClient) -> None:
        reason = await client.wait_closed()
        if self._client is client:  # the server went away (not our disconnect)
            self._client = None
            self.error = f"the connection closed: {reason}"
            self.asks.cancel_all()
            self.history.close()
            self._changed()

    async def disconnect(self) -> JSONObject:
        async with self._lock:
            await self._close()
            self._changed()
            return self.state()

    async def _close(self) -> None:
        client, self._client = self._client, None
        watch, self._watch = self._watch, None
        self.asks.cancel_all()
        if watch is not None:
            watch.cancel()
        await self._task_questions.close()
        if client is not None:
            with contextlib.suppress(MCPError, OSError):
                await client.close()
        self.history.close()

    # -- requests --------------------------------------------------------------------------

    async def request(self, method: str, params: JSONObject | None) -> JSONObject:
        """Send any client-to-server request: {"result": ...} or {"error": {code, message,
        data}} (code None for a failure on our side: not connected, timed out, closed), and
        "ms", the time it took."""
        started = time.monotonic()
        try:
            result = await self._send(method, params)
            answer: JSONObject = {"result": result}
        except ProtocolError as exc:
            answer = {"error": {"code": exc.code, "message": exc.message, "data": exc.data}}
        except (MCPError, ValueError, TypeError) as exc:
            answer = {"error": {"code": None, "message": _describe(exc), "data": None}}
        answer["ms"] = round((time.monotonic() - started) * 1000, 3)
        return answer

    async def _send(self, method: str, params: JSONObject | None) -> JSONObject:
        client = self._client
        if client is None:
            raise ValueError("not connected")
        if method == "logging/setLevel":
            # per-request servers take the level on each request, not as a request
            await client.set_logging_level(str((params or {}).get("level")))
            return {}
        progress = _ignore_progress if method == "tools/call" else None
        result = await client.request(method, params, on_progress=progress)
        if method == "tasks/get":  # a 2026-07-28 task's questions come with it
            self._task_questions.seen(client, result)
        return result

    async def close(self) -> None:
        async with self._lock:
            await self._close()


def _default_oauth() -> Any:
    """`mcpkit list`'s OAuth: tokens in the user's store, a login in the browser."""
    from mcpkit.auth.client import Browser, ClientMetadata, FileStore, OAuth

    return OAuth(
        metadata=ClientMetadata(client_name="mcpkit inspector"),
        store=FileStore(),
        approval=Browser(),
        login=True,
    )


def _ignore_progress(progress: float, total: float | None, message: str | None) -> None:
    """Asks for progress on tools/call; it reaches the page as notification events."""


def _recorded_server(server: JSONObject) -> JSONObject:
    return {key: server[key] for key in ("info", "capabilities", "protocolVersion")}


def _describe(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):
        return f"no answer within {CONNECT_TIMEOUT:g} s"
    return str(exc) or type(exc).__name__
