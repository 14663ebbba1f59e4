"""completion/complete for prompt arguments and resource-template variables.

INTERFACE STUB — fixes what `Server` calls; the implementation is being written (issue 3).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcpkit.server.context import Context

JSONObject = dict[str, Any]


class Completions:
    def __len__(self) -> int:
        return 0

    def handlers(self) -> dict[str, Callable[[Context], Any]]:
        return {}

    def decorator(self, ref_type: str, name: str) -> Callable[[Any], Any]:
        raise NotImplementedError
