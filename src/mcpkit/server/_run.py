"""`Server.run` and `Server.http_app`: the one place the server framework reaches for a
concrete transport. It gets the pieces of a server it wires (`Serving`), not the `Server`.

The HTTP app's keywords are typed once, by `HTTPAppOptions` (transports/http/options.py);
`Server.http_app` and `Server.run` name that type (and the app's) through this module, for
type checkers only, so `import mcpkit.server` still loads no transport.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from types import EllipsisType
from typing import TYPE_CHECKING, Any, TypedDict, Unpack

from mcpkit._extras import optional_dependency
from mcpkit.runtime import SessionlessServer
from mcpkit.runtime.fanout import FanOutTarget

if TYPE_CHECKING:
    from mcpkit.server.request_state import RequestStateCodec
    from mcpkit.server.tasks import TaskManager

    # Re-exported for server.py's hints (server/ imports no transport but through here).
    from mcpkit.transports.http.app import MCPHTTPApp as MCPHTTPApp  # noqa: PLC0414
    from mcpkit.transports.http.options import (
        HTTPAppOptions as HTTPAppOptions,  # noqa: PLC0414
    )
    from mcpkit.transports.http.options import (
        HTTPRunOptions as HTTPRunOptions,  # noqa: PLC0414
    )

ToolHeaders = Callable[[str], "dict[str, tuple[str, ...]] | None"]


@dataclass(frozen=True, slots=True)
class Serving:
    """What a transport needs from a server: run a session (`serve`), serve sessionless
    requests, enter the lifespan (`running`), the Mcp-Param headers of each tool, and a way to
    end long-lived 2026-07-28 requests gracefully before shutdown, the scopes each request
    needs (with authorization), and the server itself for its fan-out."""

    serve: Callable[..., Coroutine[Any, Any, None]]  # (transport, restored=None)
    sessionless: SessionlessServer
    running: Callable[[], contextlib.AbstractAsyncContextManager[Any]]
    tool_headers: ToolHeaders
    close_subscriptions: Callable[[], Any]
    required_scopes: Callable[[str, dict[str, Any] | None], frozenset[str]]
    fanout_target: FanOutTarget  # the server, whose fan-out workers sharing a state carry
    # What workers sharing one HTTP state must share too (see `_share`).
    tasks: TaskManager
    request_state: Callable[[], RequestStateCodec]


class StdioRunOptions(TypedDict, total=False):
    """`Server.run(transport="stdio", ...)`: the largest message read, in bytes."""

    max_message_size: int


def run(server: Serving, transport: str, options: dict[str, Any]) -> None:
    """Raises ValueError for an unknown transport, or `auth=` over stdio."""
    if transport not in ("stdio", "http"):
        raise ValueError(f"unknown transport {transport!r} (available: 'stdio', 'http')")
    if not logging.getLogger().handlers:
        logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    if transport == "http":
        _serve_http(server, **options)
        return
    if "auth" in options:
        raise ValueError(
            "auth= protects an HTTP server; over stdio the client's credentials come from the "
            "environment the server is started with"
        )
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve_stdio(server, **options))


async def _serve_stdio(server: Serving, **options: Unpack[StdioRunOptions]) -> None:
    from mcpkit.transports.stdio import stdio_server_transport

    async with stdio_server_transport(**options) as transport:
        await server.serve(transport)


def http_app(server: Serving, options: HTTPAppOptions) -> MCPHTTPApp:
    """The app for `http_app`'s keywords; the server gives the scopes each request needs and
    each tool's Mcp-Param headers unless they are given. Raises what `app_config` raises."""
    from mcpkit.transports.http.app import build

    options.setdefault("required_scopes", server.required_scopes)
    state = options.get("state")
    if state is not None and state.shared:
        _share(server, state)
    return build(
        server.serve,
        server.sessionless,
        server.running,
        options,
        tool_headers=server.tool_headers,
        close_subscriptions=server.close_subscriptions,
        fanout_target=server.fanout_target,
    )


def _share(server: Serving, state: Any) -> None:
    """Several workers serve `server` through `state`: what each would otherwise keep for
    itself must be the same on all. Raises ValueError when no requestState sealing keys are
    configured (each worker would invent its own: a retry landing on another worker would be
    refused), or for tasks kept in one process (see `TaskManager.share`)."""
    if server.request_state().keys.random:
        raise ValueError(NO_SHARED_KEYS)
    server.tasks.share(getattr(state, "client", None), getattr(state, "prefix", "mcpkit:"))


NO_SHARED_KEYS = (
    "several workers share this HTTP app's state, so they must seal 2026-07-28 requestState "
    "with the same keys: set $MCPKIT_REQUEST_STATE_KEYS (comma-separated secrets, newest "
    "first) or Server(request_state_keys=[...]) to the same secret on every worker; make one "
    "with: python -c 'from mcpkit.server.request_state import RequestStateKeys; "
    "print(RequestStateKeys.generate())'"
)


def _serve_http(
    server: Serving,
    host: str = "127.0.0.1",
    port: int = 8000,
    log_level: str = "warning",
    log_config: dict[str, Any] | EllipsisType | None = ...,  # ...: uvicorn's own
    **options: Unpack[HTTPAppOptions],
) -> None:
    with optional_dependency():  # uvicorn: the 'http' extra
        from mcpkit.transports.http.serving import serve

    options.setdefault("bind_host", host)
    app = http_app(server, options)
    # drains on SIGTERM before the socket closes (transports/http/serving.py)
    serve(
        app,
        host=host,
        port=port,
        drain_timeout=app.config.drain_timeout,
        log_level=log_level,
        log_config=log_config,
    )
