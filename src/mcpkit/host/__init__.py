"""The Host: many servers under one application (in progress: configuration so far).

`load_config` reads the servers people already configure for Claude Desktop, Cursor, Claude
Code or VS Code (see `mcpkit.host.config`).
"""

from mcpkit.host.config import ConfigError, HostConfig, InputSpec, ServerConfig, load_config

__all__ = ["ConfigError", "HostConfig", "InputSpec", "ServerConfig", "load_config"]
