"""The web inspector: a local page to connect to a server, call everything and watch the
messages (`mcpkit inspect`, docs/inspector.md)."""
