"""The host's one view of every server's tools and prompts (see `aggregate` for the naming):
`call_tool` and `get_prompt` route a public name back to the server that has it.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

from mcpkit.client import Client
from mcpkit.host.aggregate import Aggregate, HostItem
from mcpkit.host.config import ServerConfig

if TYPE_CHECKING:
    from mcpkit.runtime import ProgressCallback
    from mcpkit.types import CallToolResult, CompleteResult, GetPromptResult, Prompt, Tool

JSONObject = dict[str, Any]

__all__ = ["HostItem", "HostPrompts", "HostTools"]


class HostTools(Aggregate["Tool"]):
    """Every ready server's offered tools; `call_tool` routes by public name."""

    kind = "tools"

    def _fetch(self, client: Client) -> Awaitable[list[Tool]]:
        return client.list_all_tools()

    def _offers(self, config: ServerConfig, name: str) -> bool:
        return config.offers(name)

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
        client, original = await self._route(name)
        return await client.call_tool(
            original, arguments, raise_on_error=raise_on_error, on_progress=on_progress
        )


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
        client, original = await self._route(name)
        return await client.get_prompt(original, arguments)

    async def complete(
        self, name: str, argument: str, value: str, *, context: dict[str, str] | None = None
    ) -> CompleteResult:
        """Suggestions for an argument of the prompt `name` (public name), from its server."""
        client, original = await self._route(name)
        return await client.complete(argument, value, prompt=original, context=context)
