"""The one view of many servers' items (tools, prompts, resources) that every list of the host
is built on: names that never collide, and the way back to the server that has an item.

An `Aggregate` (`HostTools`, `HostPrompts`, `HostResources` alike) lists each ready server's
items (every page), keeps those its configuration offers (`allowTools` / `denyTools`, for
tools), and names each `server<separator>item` ("files__read" with the default "__"). A
server name is first reduced to the characters a tool name may hold; when two servers still
end up with the same prefix, the later ones get "-2", "-3", ... The original server and name
are always recoverable (`resolve`); the subclasses' `call_tool`, `get_prompt`,
`read_resource` route through them. Names may repeat within a server (two resources called
"README.md" with different URIs): each item is listed once per original (name, or URI), and a
repeated name gets "-2", "-3", ... so every item stays reachable. A server's list is fetched
again after its `notifications/*/list_changed`, or once it restarted; a server that did not
declare the capability (no `prompts`) is skipped without asking it.

A server that is not ready keeps its last list: a call to one of its items, or to any name
with its prefix, raises `ServerUnavailable` (naming the server and its state), not "no tool
named". A call that
raises `ConnectionClosed` tells `HostServers.connection_lost`, so the server is taken for gone
at once.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Generic, TypeVar

from mcpkit.client import Client
from mcpkit.errors import ConnectionClosed
from mcpkit.host.config import ServerConfig
from mcpkit.host.servers import HostServers, ServerState, ServerUnavailable

logger = logging.getLogger("mcpkit.host")
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")
T = TypeVar("T")
R = TypeVar("R")


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
        self._prefixes = server_prefixes(list(servers.config.servers), separator)
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

    async def _fetch_declared(self, client: Client) -> list[T]:
        # A server that did not declare the capability has none: not an error to log.
        return await self._fetch(client) if client.supports(self.kind) else []

    def _named(self, server: str) -> list[HostItem[T]]:
        """The server's offered items under their public names: once per original, and a
        repeated name made unique with "-2", "-3", ..."""
        config = self.servers.config.servers[server]
        seen: set[str] = set()
        taken: set[str] = set()
        named: list[HostItem[T]] = []
        for item in self._lists[server]:
            original = self._original(item)
            if original in seen or not self._offers(config, original):
                continue
            seen.add(original)
            public = public_name(self._prefixes[server], item.name, taken)  # type: ignore[attr-defined]
            named.append(HostItem(public, server, original, item))
        return named

    async def list(self) -> list[HostItem[T]]:
        """Every ready server's offered items, servers in configuration order. A server whose
        listing fails is left out (logged) and asked again next time."""
        ready = self.servers.ready()
        stale = [n for n, c in ready.items() if n not in self._lists or self._clients[n] is not c]
        fetched = await asyncio.gather(
            *(self._fetch_declared(ready[name]) for name in stale), return_exceptions=True
        )
        for name, found in zip(stale, fetched, strict=True):
            if isinstance(found, BaseException):
                self._lost(name, ready[name], found)
                logger.warning("server %s: could not list its %s: %s", name, self.kind, found)
                continue
            self._lists[name], self._clients[name] = found, ready[name]
        offered = [
            item
            for name in self.servers.config.servers
            if name in ready and name in self._lists
            for item in self._named(name)
        ]
        self._by_name = {item.name: item for item in offered}
        return offered

    def resolve(self, name: str) -> HostItem[T]:
        """The item behind a public name (as of the last `list`). Raises KeyError."""
        found = self._by_name.get(name)
        if found is None:
            raise self._missing(name)
        return found

    def _missing(self, name: str) -> KeyError:
        return KeyError(f"no {self.kind[:-1]} named {name!r} (not listed, or not offered)")

    async def _route(self, name: str) -> tuple[Client, HostItem[T]]:
        """The ready client and the item behind a public name. Raises KeyError,
        ServerUnavailable (its server, listed before, is not ready now)."""
        if name not in self._by_name:
            await self.list()
        found = self._by_name.get(name) or self.listed_before(name)
        if found is None:
            raise self.unreachable(name)
        return self.servers.client(found.server), found

    def unreachable(self, name: str) -> KeyError | ServerUnavailable:
        """Why a public name reaches no item of a ready server: ServerUnavailable (naming
        the server and its state) when the server it belongs to, by its last list or by
        the name's prefix, is not ready; else KeyError."""
        earlier = self.listed_before(name)
        server = earlier.server if earlier is not None else self._server_named_in(name)
        status = None if server is None else self.servers.status().get(server)
        if status is not None and status.state is not ServerState.READY:
            return ServerUnavailable(status)
        return self._missing(name)

    async def _on(self, server: str, client: Client, call: Awaitable[R]) -> R:
        """Await a request made on `server`'s client; a ConnectionClosed also tells the host
        that the server is gone."""
        try:
            return await call
        except ConnectionClosed as exc:
            self._lost(server, client, exc)
            raise

    def _lost(self, server: str, client: Client, exc: BaseException) -> None:
        if isinstance(exc, ConnectionClosed):
            self.servers.connection_lost(server, client, str(exc) or "the connection closed")

    def _server_named_in(self, name: str) -> str | None:
        """The server whose prefix `name` starts with (the longest, if several)."""
        return prefix_owner(self._prefixes, name)

    def listed_before(self, name: str) -> HostItem[T] | None:
        """The item behind a public name from the last list of a server that is not ready
        now (None if there is none): what a call to it would have reached."""
        ready = self.servers.ready()
        for server in self._lists:
            if server not in ready:
                for item in self._named(server):
                    if item.name == name:
                        return item
        return None


def server_prefixes(servers: list[str], separator: str = "__") -> dict[str, str]:
    """Each server's name prefix (`separator` included): its name in tool-name characters,
    made unique with "-2", "-3", ... (the Host's and the gateway's one naming)."""
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


def public_name(prefix: str, name: str, taken: set[str]) -> str:
    """`prefix + name`, made unique among `taken` with "-2", "-3", ... (added to `taken`)."""
    base = prefix + name
    public, n = base, 1
    while public in taken:
        n += 1
        public = f"{base}-{n}"
    taken.add(public)
    return public


def prefix_owner(prefixes: dict[str, str], name: str) -> str | None:
    """The server whose prefix `name` starts with (the longest, if several; None: none)."""
    owners = [server for server, prefix in prefixes.items() if name.startswith(prefix)]
    return max(owners, key=lambda server: len(prefixes[server]), default=None)
