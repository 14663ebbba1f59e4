"""Reading JSON someone else wrote: one function every auth parser goes through.

The standard library's `json.loads` recurses once per nesting level and raises RecursionError
(not ValueError) for a body of a few thousand brackets, which handlers that catch ValueError
let through as a 500 with a traceback. orjson refuses nesting past 1,024 levels itself, with a
ValueError, but a value nested 1,000 deep still breaks later readers that recurse (`repr`,
`json.dumps`, `copy.deepcopy`, PyJWT). OAuth documents nest a few levels at most (a JWK Set
is four), so `loads` refuses anything deeper than `MAX_DEPTH`, also as ValueError: a caller
has one exception to catch, whatever the attack.
"""

from __future__ import annotations

from typing import Any

import orjson

from mcpkit.errors import MCPError

MAX_DEPTH = 32


class NestedTooDeep(MCPError, ValueError):
    """A JSON document nested deeper than the limit."""


def loads(data: bytes | str, max_depth: int = MAX_DEPTH) -> Any:
    """The JSON value of `data`. Raises ValueError: not JSON (orjson.JSONDecodeError is one),
    or arrays and objects nested deeper than `max_depth` (NestedTooDeep)."""
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        if "depth limit" in str(exc):  # orjson's own limit (1,024): say what it is about
            raise NestedTooDeep(f"JSON nested deeper than {max_depth} levels") from None
        raise
    if isinstance(value, dict | list) and not _within(value, max_depth):
        raise NestedTooDeep(f"JSON nested deeper than {max_depth} levels")
    return value


def _within(value: dict[str, Any] | list[Any], limit: int) -> bool:
    # Iterative on purpose: a recursive walk would fail the way it is meant to guard against.
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return False
        children = node.values() if isinstance(node, dict) else node
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return True
