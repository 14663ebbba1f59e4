"""Deprecated: this module is `mcpkit.protocol.per_request` (its name until 0.1.0; the eras
are named by mechanism since issue 23). Every name still resolves here for one release, with
a DeprecationWarning naming the new module."""

from __future__ import annotations

from typing import Any

from mcpkit.protocol import per_request as _per_request
from mcpkit.types.deprecation import warn_deprecated

_RENAMED = {"MODERN_ERROR_CODES": "PER_REQUEST_ERROR_CODES", "is_modern": "is_per_request"}


def __getattr__(name: str) -> Any:
    new = _RENAMED.get(name, name)
    value = getattr(_per_request, new)  # AttributeError for a name it never had
    warn_deprecated(f"mcpkit.protocol.modern is deprecated; use mcpkit.protocol.per_request.{new}")
    return value
