"""Small readers for what OAuth servers send: JSON objects, strings, lists of strings."""

from __future__ import annotations

from typing import Any

import httpx

from mcpkit.auth.untrusted_json import loads

JSONObject = dict[str, Any]


def json_object(response: httpx.Response) -> JSONObject:
    """The response body as a JSON object; {} when it is anything else."""
    try:
        body = loads(response.content)
    except ValueError:  # not JSON, or nested too deep
        return {}
    return body if isinstance(body, dict) else {}


def text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def strings(value: Any) -> tuple[str, ...] | None:
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return tuple(value)
    return None


def printable(value: Any, limit: int = 200) -> str:
    """A server-supplied value, safe to put in a message: printable, bounded."""
    shown = value if isinstance(value, str) else repr(value)
    cleaned = "".join(c if c.isprintable() else "?" for c in shown)
    return cleaned if len(cleaned) <= limit else cleaned[:limit] + "..."
