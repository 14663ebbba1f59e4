"""The one view of many servers' items (tools, prompts, resources) that every list of the host
is built on: names that never collide, and the way back to the server that has an item.

An `Aggregate` (`HostTools`, `HostPrompts`, `HostResources` alike) lists each ready server's
items (every page), keeps those its configuration offers (`allowTools` / `denyTools`, for
tools), and names each `server<separator>item` ("files__read" with the default "__"). A
server name is first reduced to the characters a tool name may hold; when two servers still
end up with the same prefix, the later ones get "-2", "-3", ... The original server and name
are always recoverable (`resolve`); the subclasses' `call_tool`, `get_prompt`,
`read_resource` route through them. A server's list is fetched again after its
`notifications/*/list_changed`, or once it restarted.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Generic, TypeVar

from mcpkit.client import Client
from mcpkit.host.config import ServerConfig
from mcpkit.host.servers import HostServers

logger = logging.getLogger("mcpkit.host")
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class HostItem(Generic[T]):
    """An item as the host offers it: its public `name`, the server and the server's name for
    it, and the definition the server gave (`item`: a Tool, a Prompt)."""

    name: str
    server: str
    original: str
    item: T


class Aggregate(Generic[T]):
    """Named items of every ready server (see the module docstring)."""

    kind = ""  # "tools" or "prompts": the list_changed that makes a list stale

    def __init__(self, servers: HostServers, *, separator: str = "__") -> None:
        self.servers = servers
        self.separator = separator
        self._lists: dict[str, list[T]] = {}  # per server, until it changes
        self._clients: dict[str, Client] = {}  # which client each list came from
        self._by_name: dict[str, HostItem[T]] = {}
        self._prefixes = _prefixes(list(servers.config.servers), separator)
        servers.list_listeners.append(self._changed)

    def _fetch(self, client: Client) -> Awaitable[list[T]]:
        raise NotImplementedError

    def _offers(self, config: ServerConfig, name: str) -> bool:
        return True

    def _original(self, item: T) -> str:
        """The server's own name for the item (a resource's URI for resources)."""
        name: str = item.name  # type: ignore[attr-defined]
        return name

    def _changed(self, server: str, kind: str) -> None:
        if kind == self.kind:
            self.forget(server)

    def forget(self, server: str) -> None:
        """The server's list changed: fetch it again next time."""
        self._lists.pop(server, None)

    async def list(self) -> list[HostItem[T]]:
        """Every ready server's offered items, servers in configuration order. A server whose
        listing fails is left out (logged) and asked again next time."""
        ready = self.servers.ready()
        stale = [n for n, c in ready.items() if n not in self._lists or self._clients[n] is not c]
        fetched = await asyncio.gather(
            *(self._fetch(ready[name]) for name in stale), return_exceptions=True
        )
        for name, found in zip(stale, fetched, strict=True):
            if isinstance(found, BaseException):
                logger.warning("server %s: could not list its %s: %s", name, self.kind, found)
                continue
            self._lists[name], self._clients[name] = found, ready[name]
        offered: list[HostItem[T]] = []
        for name, config in self.servers.config.servers.items():
            if name not in ready or name not in self._lists:
                continue
            for item in self._lists[name]:
                original = self._original(item)
                if self._offers(config, original):
                    public = self._prefixes[name] + item.name  # type: ignore[attr-defined]
                    offered.append(HostItem(public, name, original, item))
        self._by_name = {item.name: item for item in offered}
        return offered

    def resolve(self, name: str) -> HostItem[T]:
        """The item behind a public name (as of the last `list`). Raises KeyError."""
        found = self._by_name.get(name)
        if found is None:
            raise KeyError(f"no {self.kind[:-1]} named {name!r} (not listed, or not offered)")
        return found

    async def _route(self, name: str) -> tuple[Client, str]:
        if name not in self._by_name:
            await self.list()
        found = self.resolve(name)
        return self.servers.client(found.server), found.original


def _prefixes(servers: list[str], separator: str) -> dict[str, str]:
    """Each server's name prefix: its name in tool-name characters, made unique."""
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
