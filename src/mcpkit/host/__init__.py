"""The Host: many servers under one application (in progress).

`load_config` reads the servers people already configure for Claude Desktop, Cursor, Claude
Code or VS Code (`mcpkit.host.config`); `HostServers` keeps them connected, each in its own
client, none able to hold up the others (`mcpkit.host.servers`).
"""

from mcpkit.host.config import ConfigError, HostConfig, InputSpec, ServerConfig, load_config
from mcpkit.host.servers import HostServers, ServerStatus, ServerUnavailable, State, Timing
from mcpkit.host.tools import HostItem, HostPrompts, HostTools

__all__ = [
    "ConfigError",
    "HostConfig",
    "HostItem",
    "HostPrompts",
    "HostServers",
    "HostTools",
    "InputSpec",
    "ServerConfig",
    "ServerStatus",
    "ServerUnavailable",
    "State",
    "Timing",
    "load_config",
]
