"""`Server.run`: the one place the server framework reaches for a concrete transport."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcpkit.server.server import Server


def run(server: Server, transport: str, **options: Any) -> None:
    if transport != "stdio":
        raise ValueError(f"unknown transport {transport!r} (available: 'stdio')")
    if not logging.getLogger().handlers:
        logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve_stdio(server, **options))


async def _serve_stdio(server: Server, **options: Any) -> None:
    from mcpkit.transports.stdio import stdio_server_transport

    async with stdio_server_transport(**options) as transport:
        await server.serve(transport)
