"""mcpkit: a complete, fast Python implementation of the Model Context Protocol."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcpkit._version import __version__

# Public names resolve lazily so `import mcpkit` stays cheap for a stdio server.
_LAZY = {
    "Server": "mcpkit.server",
    "Client": "mcpkit.client",
    "Context": "mcpkit.server.context",
    "Era": "mcpkit.types.eras",
    "Image": "mcpkit.server.content",
    "Audio": "mcpkit.server.content",
    "File": "mcpkit.server.content",
    "ResourceLink": "mcpkit.server.content",
    "UserMessage": "mcpkit.server.prompts",
    "AssistantMessage": "mcpkit.server.prompts",
}

if TYPE_CHECKING:
    from mcpkit.client import Client
    from mcpkit.server import Server
    from mcpkit.server.content import Audio, File, Image, ResourceLink
    from mcpkit.server.context import Context
    from mcpkit.server.prompts import AssistantMessage, UserMessage
    from mcpkit.types.eras import Era

__all__ = [
    "AssistantMessage",
    "Audio",
    "Client",
    "Context",
    "Era",
    "File",
    "Image",
    "ResourceLink",
    "Server",
    "UserMessage",
    "__version__",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'mcpkit' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
