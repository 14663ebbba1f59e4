"""Every server's resources and resource templates in one view, and reads and completions
routed to the server that has them.

Resources are identified by URI, and two servers may well offer the same one (two file
servers, both with `file:///notes.md`). So a read names its server when it can
(`read_resource(uri, server=...)`); without one, the host routes to the only server that lists
the URI, else to the only server with a template matching it, and refuses to guess when there
are several (`AmbiguousResource`, naming them). Listed items carry public names
(`server__name`, as tools) with the URI or template as `original`.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable
from typing import TYPE_CHECKING

from mcpkit.client import Client
from mcpkit.errors import MCPError
from mcpkit.host.aggregate import Aggregate, HostItem
from mcpkit.host.servers import HostServers, ServerUnavailable

if TYPE_CHECKING:
    from mcpkit.server.uri_template import UriTemplate
    from mcpkit.types import CompleteResult, ReadResourceResult, Resource, ResourceTemplate


class AmbiguousResource(MCPError, LookupError):
    """More than one server offers the URI: name the server (`server=`)."""

    def __init__(self, uri: str, servers: list[str]) -> None:
        super().__init__(
            f"{uri!r} is offered by {len(servers)} servers ({', '.join(servers)}): "
            "say which with server="
        )
        self.uri = uri
        self.servers = servers


class HostTemplates(Aggregate["ResourceTemplate"]):
    """Every ready server's resource templates (public names `server__name`)."""

    kind = "resources"

    def _fetch(self, client: Client) -> Awaitable[list[ResourceTemplate]]:
        return client.list_all_resource_templates()

    def _original(self, item: ResourceTemplate) -> str:
        return item.uri_template

    def servers_matching(self, uri: str) -> list[str]:
        """The servers (as of the last `list`) with a template that `uri` fits."""
        found: list[str] = []
        for entry in self._by_name.values():
            if entry.server not in found and uri_fits(entry.original, uri):
                found.append(entry.server)
        return found

    async def complete(
        self,
        template: str,
        argument: str,
        value: str,
        *,
        server: str | None = None,
        context: dict[str, str] | None = None,
    ) -> CompleteResult:
        """Suggestions for a template's argument, from the server that offers the template."""
        if not self._by_name:
            await self.list()
        owners = [e.server for e in self._by_name.values() if e.original == template]
        chosen = _one(template, owners, server)
        client = self.servers.client(chosen)
        done = client.complete(argument, value, resource=template, context=context)
        return await self._on(chosen, client, done)


class HostResources(Aggregate["Resource"]):
    """Every ready server's resources, and `read_resource` routed by URI (see the module
    docstring). `templates` is the matching view of resource templates."""

    kind = "resources"

    def __init__(self, servers: HostServers, *, separator: str = "__") -> None:
        super().__init__(servers, separator=separator)
        self.templates = HostTemplates(servers, separator=separator)

    def _fetch(self, client: Client) -> Awaitable[list[Resource]]:
        return client.list_all_resources()

    def _original(self, item: Resource) -> str:
        return item.uri

    def owner(self, uri: str) -> list[str]:
        """The servers (as of the last `list`) listing exactly `uri`."""
        return list(dict.fromkeys(e.server for e in self._by_name.values() if e.original == uri))

    async def read_resource(self, uri: str, *, server: str | None = None) -> ReadResourceResult:
        """Read `uri` from `server`, or from the one server that offers it. Raises KeyError
        (no server offers it), AmbiguousResource, ServerUnavailable, and what
        `Client.read_resource` raises."""
        if server is None:
            server = await self.server_for(uri)
        client = self.servers.client(server)
        return await self._on(server, client, client.read_resource(uri))

    async def server_for(self, uri: str) -> str:
        """The one server offering `uri` (listed, else by template). Raises KeyError,
        AmbiguousResource, ServerUnavailable (the server that listed it is not ready now)."""
        listed = self.owner(uri)
        if not listed:
            await self.list()
            listed = self.owner(uri)
        if listed:
            return _one(uri, listed, None)
        await self.templates.list()
        matching = self.templates.servers_matching(uri)
        gone = None if matching else self._listed_by_a_server_gone(uri)
        if gone is not None:
            raise ServerUnavailable(self.servers.status()[gone])
        return _one(uri, matching, None)

    def _listed_by_a_server_gone(self, uri: str) -> str | None:
        """A server that is not ready now whose last list had `uri`."""
        ready = self.servers.ready()
        for server in self._lists:
            if server not in ready and any(e.original == uri for e in self._named(server)):
                return server
        return None


def _one(uri: str, servers: list[str], chosen: str | None) -> str:
    if chosen is not None:
        if servers and chosen not in servers:
            raise KeyError(f"server {chosen!r} does not offer {uri!r}")
        return chosen
    if not servers:
        raise KeyError(f"no ready server offers {uri!r}")
    if len(servers) > 1:
        raise AmbiguousResource(uri, servers)
    return servers[0]


def uri_fits(template: str, uri: str) -> bool:
    """Whether `uri` fits the URI template `template` (False for a template that is bad)."""
    from mcpkit.server.uri_template import UriTemplateError

    try:
        return _parsed(template).match(uri) is not None
    except UriTemplateError:
        return False


@functools.lru_cache(maxsize=1024)
def _parsed(template: str) -> UriTemplate:
    # Imported here: the server package is not otherwise needed by a host.
    from mcpkit.server.uri_template import UriTemplate

    return UriTemplate(template)


__all__ = ["AmbiguousResource", "HostItem", "HostResources", "HostTemplates"]
