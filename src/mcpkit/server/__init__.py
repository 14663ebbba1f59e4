"""The server framework."""

from mcpkit.server.server import Server
from mcpkit.server.tools import Tool

__all__ = ["Server", "Tool"]
