"""The web inspector: a local page to connect to a server, call everything and watch the
messages (`mcpkit inspect`, docs/inspector.md)."""

from mcpkit.inspector.serve import Inspector, run_inspector

__all__ = ["Inspector", "run_inspector"]
