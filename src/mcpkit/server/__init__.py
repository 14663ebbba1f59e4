"""The server framework."""

from mcpkit.protocol.modern import CacheHint
from mcpkit.server.context import Context
from mcpkit.server.resources import ResourceContents, ResourceNotFound
from mcpkit.server.schema import Header
from mcpkit.server.server import Server
from mcpkit.server.tools import Tool

__all__ = [
    "CacheHint",
    "Context",
    "Header",
    "ResourceContents",
    "ResourceNotFound",
    "Server",
    "Tool",
]
