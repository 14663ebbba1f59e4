"""One view of every server's tools, under names that never collide, and calls routed back.

`HostTools` lists each ready server's tools (every page), keeps those its configuration offers
(`allowTools` / `denyTools`), and names each `server<separator>tool` ("files__read" with the
default "__"). A server name is first reduced to the characters a tool name may hold; when two
servers still end up with the same prefix, the later ones get "-2", "-3", ... The original
server and tool name are always recoverable (`resolve`), and `call_tool` routes through them.
A server's list is fetched again after its `notifications/tools/list_changed` (or a restart).
"""

from __future__ import annotations

import asyncio
import logging
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcpkit.host.servers import HostServers

if TYPE_CHECKING:
    from mcpkit.runtime import ProgressCallback
    from mcpkit.types import CallToolResult, Tool

logger = logging.getLogger("mcpkit.host")
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")
JSONObject = dict[str, Any]


@dataclass(frozen=True, slots=True)
class HostTool:
    """A tool as the host offers it: its public `name`, the server and the server's name for
    it, and the definition the server gave (`tool`)."""

    name: str
    server: str
    original: str
    tool: Tool


class HostTools:
    """The aggregated tools of `servers` (see the module docstring)."""

    def __init__(self, servers: HostServers, *, separator: str = "__") -> None:
        self.servers = servers
        self.separator = separator
        self._lists: dict[str, list[Tool]] = {}  # per server, until it changes
        self._clients: dict[str, object] = {}  # which client each list came from
        self._by_name: dict[str, HostTool] = {}
        self._prefixes = _prefixes(list(servers.config.servers), separator)
        servers.on_tools_changed = self.forget

    def forget(self, server: str) -> None:
        """The server's tools changed (list_changed, or it restarted): list them again."""
        self._lists.pop(server, None)

    async def list(self) -> list[HostTool]:
        """Every ready server's offered tools, servers in configuration order. A server whose
        listing fails is left out (logged) and asked again next time."""
        ready = self.servers.ready()
        stale = [n for n, c in ready.items() if n not in self._lists or self._clients[n] is not c]
        fetched = await asyncio.gather(
            *(ready[name].list_all_tools() for name in stale), return_exceptions=True
        )
        for name, found in zip(stale, fetched, strict=True):
            if isinstance(found, BaseException):
                logger.warning("server %s: could not list its tools: %s", name, found)
                continue
            self._lists[name], self._clients[name] = found, ready[name]
        offered: list[HostTool] = []
        for name in self.servers.config.servers:
            if name not in ready or name not in self._lists:
                continue
            config = self.servers.config.servers[name]
            for tool in self._lists[name]:
                if config.offers(tool.name):
                    public = self._prefixes[name] + tool.name
                    offered.append(HostTool(public, name, tool.name, tool))
        self._by_name = {tool.name: tool for tool in offered}
        return offered

    def resolve(self, name: str) -> HostTool:
        """The tool behind a public name (as of the last `list`). Raises KeyError."""
        found = self._by_name.get(name)
        if found is None:
            raise KeyError(f"no tool named {name!r} (list the tools first, or it is not offered)")
        return found

    async def call_tool(
        self,
        name: str,
        arguments: JSONObject | None = None,
        *,
        raise_on_error: bool = False,
        on_progress: ProgressCallback | None = None,
    ) -> CallToolResult:
        """Call a tool by its public name on the server that has it (as `Client.call_tool`).
        Raises KeyError (unknown or not offered), ServerUnavailable, and what
        `Client.call_tool` raises."""
        if name not in self._by_name:
            await self.list()
        tool = self.resolve(name)
        client = self.servers.client(tool.server)
        return await client.call_tool(
            tool.original, arguments, raise_on_error=raise_on_error, on_progress=on_progress
        )


def _prefixes(servers: list[str], separator: str) -> dict[str, str]:
    """Each server's tool-name prefix: its name in tool-name characters, made unique."""
    taken: set[str] = set()
    prefixes: dict[str, str] = {}
    for server in servers:
        base = _UNSAFE.sub("_", server).strip("_") or "server"
        candidate, n = base, 1
        while candidate in taken:
            n += 1
            candidate = f"{base}-{n}"
        taken.add(candidate)
        prefixes[server] = candidate + separator
    return prefixes
