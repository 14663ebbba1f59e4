"""`Client`: connect to a server, run the handshake, call it with typed methods."""

from __future__ import annotations

import os
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING, Any

from mcpkit._version import __version__
from mcpkit.client._targets import StdioOptions, open_transport
from mcpkit.protocol import Connection, ConnectionConfig, Initialized, Timeout
from mcpkit.runtime import ProgressCallback, Session

if TYPE_CHECKING:
    from mcpkit.types import CallToolResult, ListToolsResult

JSONObject = dict[str, Any]

DEFAULT_TIMEOUT = Timeout(60.0, reset_on_progress=True, maximum=3600.0)


class Client:
    """An MCP client. Use as `async with Client(target) as client:`.

    `target`: an argv list or command string (spawned over stdio), a `Server` (in process),
    or a transport object. Requests time out after `timeout` seconds without an answer (reset
    by progress, capped at an hour); pass `timeout=None` to wait forever. `protocol_version`
    pins the revision offered at initialize (default: the latest handshake revision).
    """

    def __init__(
        self,
        target: Any,
        *,
        name: str = "mcpkit",
        version: str = __version__,
        timeout: float | None = 60.0,
        env: dict[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        stderr: Callable[[str], None] | None = None,
        protocol_version: str | None = None,
    ) -> None:
        self._target = target
        self._protocol_version = protocol_version
        self._info: JSONObject = {"name": name, "version": version}
        self._timeout = (
            None if timeout is None else Timeout(timeout, reset_on_progress=True, maximum=3600.0)
        )
        self._stdio = StdioOptions(env=env, cwd=cwd, stderr=stderr)
        self._session: Session | None = None
        self._initialized: Initialized | None = None

    async def __aenter__(self) -> Client:
        transport = await open_transport(self._target, self._stdio)
        config = ConnectionConfig(role="client", info=self._info, capabilities={})
        session = Session(Connection(config), transport)
        session.start()
        try:
            self._initialized = await session.initialize(self._timeout, self._protocol_version)
        except BaseException:
            await session.close()
            raise
        self._session = session
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def close(self) -> None:
        if self._session is not None:
            session, self._session = self._session, None
            await session.close()

    # -- what the server said about itself ---------------------------------------------------

    @property
    def _init(self) -> Initialized:
        if self._initialized is None:
            raise RuntimeError("the client is not connected; use `async with Client(...)`")
        return self._initialized

    @property
    def server_info(self) -> JSONObject:
        return self._init.peer_info

    @property
    def server_capabilities(self) -> JSONObject:
        return self._init.peer_capabilities

    @property
    def instructions(self) -> str | None:
        return self._init.instructions

    @property
    def protocol_version(self) -> str:
        return self._init.protocol_version

    # -- requests ----------------------------------------------------------------------------

    async def request(
        self,
        method: str,
        params: JSONObject | None = None,
        *,
        timeout: float | Timeout | None = ...,  # type: ignore[assignment]
        on_progress: ProgressCallback | None = None,
    ) -> JSONObject:
        """Send any request and return its raw result dict."""
        if self._session is None:
            raise RuntimeError("the client is not connected; use `async with Client(...)`")
        if timeout is ...:
            limit = self._timeout
        elif isinstance(timeout, Timeout) or timeout is None:
            limit = timeout
        else:
            limit = Timeout(timeout, reset_on_progress=True, maximum=3600.0)
        return await self._session.request(method, params, timeout=limit, on_progress=on_progress)

    async def ping(self) -> None:
        await self.request("ping")

    async def list_tools(self, cursor: str | None = None) -> ListToolsResult:
        from mcpkit.types import ListToolsResult

        params = None if cursor is None else {"cursor": cursor}
        return ListToolsResult.model_validate(await self.request("tools/list", params))

    async def call_tool(
        self,
        name: str,
        arguments: JSONObject | None = None,
        *,
        timeout: float | None = ...,  # type: ignore[assignment]
        on_progress: ProgressCallback | None = None,
    ) -> CallToolResult:
        """Call a tool and return its result (a tool error comes back with `is_error` set)."""
        from mcpkit.types import CallToolResult

        params: JSONObject = {"name": name, "arguments": arguments or {}}
        result = await self.request("tools/call", params, timeout=timeout, on_progress=on_progress)
        return CallToolResult.model_validate(result)
