"""`Server.run` and `Server.http_app`: the one place the server framework reaches for a
concrete transport. It gets the pieces of a server it wires (`Serving`), not the `Server`."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from mcpkit.runtime import MessageTransport, SessionlessServer

ToolHeaders = Callable[[str], "dict[str, tuple[str, ...]] | None"]


@dataclass(frozen=True, slots=True)
class Serving:
    """What a transport needs from a server: run a session (`serve`), serve sessionless
    requests, enter the lifespan (`running`), the Mcp-Param headers of each tool, and a way to
    end long-lived 2026-07-28 requests gracefully before shutdown."""

    serve: Callable[[MessageTransport], Coroutine[Any, Any, None]]
    sessionless: SessionlessServer
    running: Callable[[], contextlib.AbstractAsyncContextManager[Any]]
    tool_headers: ToolHeaders
    close_subscriptions: Callable[[], Any]


def run(server: Serving, transport: str, **options: Any) -> None:
    if transport not in ("stdio", "http"):
        raise ValueError(f"unknown transport {transport!r} (available: 'stdio', 'http')")
    if not logging.getLogger().handlers:
        logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    if transport == "http":
        _serve_http(server, **options)
        return
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve_stdio(server, **options))


async def _serve_stdio(server: Serving, **options: Any) -> None:
    from mcpkit.transports.stdio import stdio_server_transport

    async with stdio_server_transport(**options) as transport:
        await server.serve(transport)


def http_app(server: Serving, **options: Any) -> Any:
    """Options are `HTTPOptions` fields; security ones (allowed_hosts, allowed_origins,
    dns_rebinding_protection, trusted_proxies, bind_host) may be given flat."""
    from mcpkit.transports.http.app import HTTPOptions, MCPHTTPApp
    from mcpkit.transports.http.security import Security

    security_keys = set(Security.__dataclass_fields__)
    flat = {key: options.pop(key) for key in list(options) if key in security_keys}
    if flat:
        if "security" in options:
            raise ValueError("give either security=Security(...) or its fields, not both")
        for key in ("allowed_hosts", "allowed_origins", "trusted_proxies"):
            if flat.get(key) is not None:
                flat[key] = tuple(flat[key])
        options["security"] = Security(**flat)
    return MCPHTTPApp(
        server.serve,
        server.sessionless,
        server.running,
        HTTPOptions(**options),
        tool_headers=server.tool_headers,
        close_subscriptions=server.close_subscriptions,
    )


def _serve_http(
    server: Serving,
    host: str = "127.0.0.1",
    port: int = 8000,
    log_level: str = "warning",
    **options: Any,
) -> None:
    import uvicorn

    options.setdefault("bind_host", host)
    app = http_app(server, **options)

    class DrainingServer(uvicorn.Server):
        # uvicorn waits for open responses before its lifespan shutdown: end the long-lived
        # ones (2026-07-28 subscriptions) gracefully first, with their completion result.
        async def shutdown(self, sockets: Any = None) -> None:
            await app.drain()
            await super().shutdown(sockets)

    config = uvicorn.Config(app, host=host, port=port, log_level=log_level, lifespan="on")
    DrainingServer(config).run()
