"""The host's one view of every server's tools and prompts (see `aggregate` for the naming):
`call_tool` and `get_prompt` route a public name back to the server that has it.

A `HostTools` given a `ConsentPolicy` (the `Host`'s always is) asks it before every call:
`call_tool` raises `ConsentDenied` when the user or the policy says no. Code that decided
itself says so in the call, `call_tool(..., consent=False)`: the agent, which asks first so it
can tell the model about a refusal, and an application's own trusted calls.

MCP Apps: a tool whose `_meta.ui.visibility` leaves out "model" is for its server's views
only; it is never listed here (so never offered to a model: the agent, the providers,
`mcpkit chat`) nor callable by public name. A view reaches it through `server_tool` and the
view bridge (`mcpkit.host.apps`), which checks "app" instead.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

from mcpkit.client import Client
from mcpkit.errors import ConnectionClosed
from mcpkit.host.aggregate import Aggregate, HostItem
from mcpkit.host.config import ServerConfig
from mcpkit.protocol.apps import tool_ui

if TYPE_CHECKING:
    from mcpkit.host.consent import ConsentPolicy
    from mcpkit.host.servers import HostServers
    from mcpkit.runtime import ProgressCallback
    from mcpkit.types import CallToolResult, CompleteResult, GetPromptResult, Prompt, Tool

JSONObject = dict[str, Any]

__all__ = ["HostItem", "HostPrompts", "HostTools"]


class HostTools(Aggregate["Tool"]):
    """Every ready server's offered tools; `call_tool` routes by public name, after asking
    `consent` when there is one (see the module docstring)."""

    kind = "tools"

    def __init__(
        self,
        servers: HostServers,
        *,
        separator: str = "__",
        consent: ConsentPolicy | None = None,
    ) -> None:
        super().__init__(servers, separator=separator)
        self.consent = consent

    def _fetch(self, client: Client) -> Awaitable[list[Tool]]:
        return client.list_all_tools()

    def _offers(self, config: ServerConfig, name: str) -> bool:
        return config.offers(name)

    def _named(self, server: str) -> list[HostItem[Tool]]:
        # App-only tools are left out of everything a model or a public name reaches.
        return [i for i in super()._named(server) if tool_ui(i.item.meta).for_model]

    async def server_tool(self, server: str, name: str) -> Tool | None:
        """The tool `server` calls `name` (its own name), app-only ones included, from the
        server's current list (fetched if stale); None when it has none by that name or the
        configuration does not offer it. Raises nothing for a server that is not ready
        (None: it has no tools now)."""
        await self.list()
        config = self.servers.config.servers.get(server)
        if config is None or server not in self.servers.ready() or not config.offers(name):
            return None
        return next((t for t in self._lists.get(server, ()) if t.name == name), None)

    async def call_tool(
        self,
        name: str,
        arguments: JSONObject | None = None,
        *,
        raise_on_error: bool = False,
        on_progress: ProgressCallback | None = None,
        consent: bool = True,
    ) -> CallToolResult:
        """Call a tool by its public name on the server that has it (as `Client.call_tool`),
        once the consent policy allows it (asking the user if it says ask). `consent=False`
        skips the policy: only for a call the application itself decided on, or already
        asked about. Raises KeyError (unknown or not offered), ServerUnavailable (its
        server is not ready), ConsentDenied, DecisionStoreError, and what
        `Client.call_tool` raises."""
        client, item = await self._route(name)
        if consent and self.consent is not None:
            await self.consent.check_tool(item.server, item.item, arguments)
            client = self.servers.client(item.server)  # the user may have taken a while
        try:  # as `_on`, written out: this is the hot path
            return await client.call_tool(
                item.original, arguments, raise_on_error=raise_on_error, on_progress=on_progress
            )
        except ConnectionClosed as exc:
            self._lost(item.server, client, exc)
            raise


class HostPrompts(Aggregate["Prompt"]):
    """Every ready server's prompts; `get_prompt` routes by public name."""

    kind = "prompts"

    def _fetch(self, client: Client) -> Awaitable[list[Prompt]]:
        return client.list_all_prompts()

    async def get_prompt(
        self, name: str, arguments: dict[str, str] | None = None
    ) -> GetPromptResult:
        """Get a prompt by its public name from the server that has it (as
        `Client.get_prompt`). Raises KeyError, ServerUnavailable, and what it raises."""
        client, item = await self._route(name)
        return await self._on(item.server, client, client.get_prompt(item.original, arguments))

    async def complete(
        self, name: str, argument: str, value: str, *, context: dict[str, str] | None = None
    ) -> CompleteResult:
        """Suggestions for an argument of the prompt `name` (public name), from its server."""
        client, item = await self._route(name)
        done = client.complete(argument, value, prompt=item.original, context=context)
        return await self._on(item.server, client, done)
