"""Transports: in-memory pairs, stdio (server side and spawned subprocess)."""
