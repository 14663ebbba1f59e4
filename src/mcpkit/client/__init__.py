"""The MCP client."""

from mcpkit.client.client import Client

__all__ = ["Client"]
