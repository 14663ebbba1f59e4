"""mcpkit: a complete, fast Python implementation of the Model Context Protocol."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcpkit._version import __version__

# Public names resolve lazily so `import mcpkit` stays cheap for a stdio server.
_LAZY = {
    "Server": "mcpkit.server",
    "Client": "mcpkit.client",
}

if TYPE_CHECKING:
    from mcpkit.client import Client
    from mcpkit.server import Server

__all__ = ["Client", "Server", "__version__"]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'mcpkit' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
