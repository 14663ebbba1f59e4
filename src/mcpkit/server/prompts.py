"""Prompts: typed arguments in, messages out.

INTERFACE STUB — fixes what `Server` calls; the implementation is being written (issue 3).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcpkit.server.context import Context
from mcpkit.server.pagination import Paginator

JSONObject = dict[str, Any]


class PromptRegistry:
    def __init__(self, paginator: Paginator, on_change: Callable[[str], None]) -> None:
        self._paginator = paginator
        self._on_change = on_change

    def __len__(self) -> int:
        return 0

    def capability(self) -> JSONObject:
        return {"listChanged": True}

    def handlers(self) -> dict[str, Callable[[Context], Any]]:
        return {}

    def decorator(self, name: str | None = None, **options: Any) -> Callable[[Any], Any]:
        raise NotImplementedError
