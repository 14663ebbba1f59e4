"""Resources: static, function-backed and templated; list, read, subscribe.

INTERFACE STUB — the registry below fixes what `Server` calls; the implementation is being
written (issue 3). Keep the public method names and signatures.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcpkit.errors import ProtocolError, resource_not_found_code
from mcpkit.server.context import Context
from mcpkit.server.pagination import Paginator

JSONObject = dict[str, Any]


class ResourceRegistry:
    def __init__(self, paginator: Paginator, on_change: Callable[[str], None]) -> None:
        self._paginator = paginator
        self._on_change = on_change

    def __len__(self) -> int:
        return 0

    def capability(self) -> JSONObject:
        return {"subscribe": True, "listChanged": True}

    def handlers(self) -> dict[str, Callable[[Context], Any]]:
        return {}

    def decorator(self, uri: str, **options: Any) -> Callable[[Any], Any]:
        raise NotImplementedError

    async def read(self, uri: str, ctx: Context) -> JSONObject:
        raise ProtocolError(
            resource_not_found_code(ctx.protocol_version),
            f"Resource not found: {uri}",
            {"uri": uri},
        )
