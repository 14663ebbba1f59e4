"""What `Client(target)` connects to: the one place the client reaches for a transport."""

from __future__ import annotations

import asyncio
import os
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from mcpkit.runtime import MessageTransport


@dataclass(frozen=True, slots=True)
class StdioOptions:
    env: dict[str, str] | None = None
    cwd: str | os.PathLike[str] | None = None
    stderr: Callable[[str], None] | None = None


async def open_transport(target: Any, stdio: StdioOptions) -> MessageTransport:
    """A connected transport for `target`: argv list, command string, Server, or transport."""
    if hasattr(target, "read") and hasattr(target, "write"):
        return target  # type: ignore[no-any-return]
    if hasattr(target, "serve") and hasattr(target, "connection_config"):
        return _in_process(target)
    if isinstance(target, str):
        if "://" in target:
            raise NotImplementedError("HTTP targets arrive with the Streamable HTTP transport")
        argv: Sequence[str] = shlex.split(target)
    elif isinstance(target, Sequence) and all(isinstance(a, str | os.PathLike) for a in target):
        argv = [os.fspath(a) for a in target]
    else:
        raise TypeError(f"cannot connect to {target!r}: give argv, a command line or a Server")
    from mcpkit.transports.stdio import SubprocessTransport

    return await SubprocessTransport.spawn(
        argv, env=stdio.env, cwd=stdio.cwd, stderr_callback=stdio.stderr
    )


def _in_process(server: Any) -> MessageTransport:
    from mcpkit.transports.memory import memory_pair

    client_end, server_end = memory_pair()
    task = asyncio.get_running_loop().create_task(server.serve(server_end))
    _keep_alive.add(task)
    task.add_done_callback(_keep_alive.discard)
    return client_end


_keep_alive: set[asyncio.Task[None]] = set()
