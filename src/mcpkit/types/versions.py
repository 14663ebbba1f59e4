"""Protocol revisions mcpkit speaks (plain data; imports nothing heavy), by era
(`mcpkit.types.eras`): the handshake era's and the per-request era's."""

from typing import Any

HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
PER_REQUEST_VERSIONS = ("2026-07-28",)
SUPPORTED_VERSIONS = HANDSHAKE_VERSIONS + PER_REQUEST_VERSIONS
LATEST_HANDSHAKE_VERSION = HANDSHAKE_VERSIONS[-1]
LATEST_PROTOCOL_VERSION = PER_REQUEST_VERSIONS[-1]


def __getattr__(name: str) -> Any:
    # MODERN_VERSIONS, the name until 0.1.0: answered for one release, with a warning.
    if name == "MODERN_VERSIONS":
        from mcpkit.types.deprecation import warn_deprecated

        warn_deprecated("MODERN_VERSIONS is deprecated; use PER_REQUEST_VERSIONS")
        return PER_REQUEST_VERSIONS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
