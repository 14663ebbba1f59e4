"""The server framework."""

from mcpkit.protocol.per_request import CacheHint
from mcpkit.server.context import Context
from mcpkit.server.prompts import Prompt, PromptOptions
from mcpkit.server.resources import (
    DirectoryOptions,
    ResourceContents,
    ResourceNotFound,
    ResourceOptions,
)
from mcpkit.server.schema import Header
from mcpkit.server.server import Server
from mcpkit.server.tools import Tool, ToolOptions

__all__ = [
    "CacheHint",
    "Context",
    "DirectoryOptions",
    "Header",
    "Prompt",
    "PromptOptions",
    "ResourceContents",
    "ResourceNotFound",
    "ResourceOptions",
    "Server",
    "Tool",
    "ToolOptions",
]
