"""What `Client(target)` connects to: the one place the client reaches for a transport."""

from __future__ import annotations

import asyncio
import os
import shlex
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol, TypeAlias, cast

from mcpkit._extras import optional_dependency
from mcpkit.protocol import ConnectionConfig
from mcpkit.runtime import MessageTransport


class HTTPAuth(Protocol):
    """What `auth=` takes: an `httpx.Auth`, such as `mcpkit.auth.client.OAuth` or
    `httpx.BasicAuth`. Described by the method the HTTP transport calls, so that the client
    names httpx's class without importing httpx (an optional dependency)."""

    def async_auth_flow(self, request: Any, /) -> AsyncGenerator[Any, Any]: ...


class InProcessServer(Protocol):
    """A server run in this process (`mcpkit.Server`), as the client sees it."""

    def connection_config(self) -> ConnectionConfig: ...

    async def serve(self, transport: MessageTransport, /) -> None: ...


# What `Client(target)` connects to: an http(s):// URL, a command line, an argv list, a
# Server in this process, or a transport object.
Target: TypeAlias = str | Sequence[str | os.PathLike[str]] | InProcessServer | MessageTransport


@dataclass(frozen=True, slots=True)
class StdioOptions:
    env: dict[str, str] | None = None
    cwd: str | os.PathLike[str] | None = None
    stderr: Callable[[str], None] | None = None


@dataclass(frozen=True, slots=True)
class HTTPOptions:
    """How to reach an `http(s)://` target.

    `headers` go on every HTTP request; `auth` is an `httpx.Auth` instance (`HTTPAuth`, so
    the client need not import httpx); `timeout` bounds connecting and sending, in seconds
    (answers take as long as the request's own timeout); `max_reconnects` bounds attempts in
    a row to resume an SSE stream; `fallback` tries the 2024-11-05 HTTP+SSE transport when
    the initialize POST is refused with 400/404/405. When the server ends the session (404),
    the client raises ConnectionClosed; with `renew_session` it starts a new session in its
    place instead (the server's per-session state, such as subscriptions and the log level,
    does not carry over, and answers still owed on the old session are lost).
    """

    headers: Mapping[str, str] | None = None
    auth: HTTPAuth | None = None
    timeout: float = 30.0
    max_reconnects: int = 3
    fallback: bool = True
    renew_session: bool = False


def is_url(target: object) -> bool:
    return isinstance(target, str) and target.startswith(("http://", "https://"))


def with_auth(target: Target, http: HTTPOptions | None, auth: HTTPAuth) -> HTTPOptions:
    """`http` with `auth` (an `httpx.Auth`, such as `mcpkit.auth.client.OAuth`) for a URL
    target. Raises ValueError for any other target (a stdio server takes its credentials from
    its environment: `env=`) and when `http` carries an auth of its own."""
    if not is_url(target):
        raise ValueError(
            "auth= is for http(s):// servers; a stdio server takes its credentials from its "
            "environment (env={...})"
        )
    if http is not None and http.auth is not None:
        raise ValueError("give auth= or HTTPOptions(auth=...), not both")
    return replace(http or HTTPOptions(), auth=auth)


async def open_transport(
    target: Target,
    stdio: StdioOptions,
    http: HTTPOptions | None = None,
    tool_headers: Callable[[str], Mapping[str, tuple[str, ...]] | None] | None = None,
) -> MessageTransport:
    """A transport for `target`: URL, argv list, command string, Server, or transport.

    A URL connects lazily: an unreachable server surfaces as ConnectionClosed at initialize.
    Raises ValueError for a URL scheme other than http(s), TypeError for anything else.
    """
    # Duck-typed on purpose: a transport or server need not subclass ours.
    if hasattr(target, "read") and hasattr(target, "write"):
        return cast(MessageTransport, target)
    if hasattr(target, "serve") and hasattr(target, "connection_config"):
        return _in_process(cast(InProcessServer, target))
    if isinstance(target, str):
        if is_url(target):
            return _http(target, http or HTTPOptions(), tool_headers)
        if "://" in target.split(None, 1)[0]:
            raise ValueError(f"cannot connect to {target!r}: only http:// and https:// URLs")
        argv: Sequence[str] = shlex.split(target)
    elif isinstance(target, Sequence) and all(isinstance(a, str | os.PathLike) for a in target):
        argv = [os.fspath(a) for a in target]
    else:
        raise TypeError(f"cannot connect to {target!r}: give argv, a command line or a Server")
    from mcpkit.transports.stdio import SubprocessTransport

    return await SubprocessTransport.spawn(
        argv, env=stdio.env, cwd=stdio.cwd, stderr_callback=stdio.stderr
    )


def _http(
    url: str,
    options: HTTPOptions,
    tool_headers: Callable[[str], Mapping[str, tuple[str, ...]] | None] | None,
) -> MessageTransport:
    with optional_dependency():  # httpx: the 'http' extra
        from mcpkit.transports.http.client import StreamableHTTPTransport

    return StreamableHTTPTransport(
        url,
        headers=options.headers,
        # HTTPAuth is httpx.Auth described without httpx; httpx refuses anything else.
        auth=cast(Any, options.auth),
        timeout=options.timeout,
        max_reconnects=options.max_reconnects,
        fallback=options.fallback,
        renew_session=options.renew_session,
        tool_headers=tool_headers,
    )


def _in_process(server: InProcessServer) -> MessageTransport:
    from mcpkit.transports.memory import memory_pair, served_error

    client_end, server_end = memory_pair()
    task = asyncio.get_running_loop().create_task(server.serve(server_end))
    _keep_alive.add(task)
    task.add_done_callback(_keep_alive.discard)
    task.add_done_callback(served_error)  # its error reaches the client (closed_reason)
    client_end.served = task  # the client's close waits for the server to finish
    return client_end


_keep_alive: set[asyncio.Task[None]] = set()
