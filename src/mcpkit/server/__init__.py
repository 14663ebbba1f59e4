"""The server framework."""

from mcpkit.server.context import Context
from mcpkit.server.resources import ResourceContents, ResourceNotFound
from mcpkit.server.server import Server
from mcpkit.server.tools import Tool

__all__ = ["Context", "ResourceContents", "ResourceNotFound", "Server", "Tool"]
