"""What a tool returns -> a CallToolResult dict."""

from __future__ import annotations

from typing import Any

import orjson

JSONObject = dict[str, Any]


def text_content(text: str) -> JSONObject:
    return {"type": "text", "text": text}


def to_call_tool_result(value: Any) -> JSONObject:
    """Strings become text content; None no content; other values their JSON as text."""
    if type(value) is str:
        return {"content": [{"type": "text", "text": value}], "isError": False}
    if value is None:
        return {"content": [], "isError": False}
    if isinstance(value, list):
        return {"content": [_content_block(item) for item in value], "isError": False}
    return {"content": [_content_block(value)], "isError": False}


def _content_block(item: Any) -> JSONObject:
    if isinstance(item, str):
        return text_content(item)
    return text_content(orjson.dumps(item, option=orjson.OPT_NON_STR_KEYS).decode())


def error_result(message: str) -> JSONObject:
    """A tool-level failure the model can read and act on."""
    return {"content": [text_content(message)], "isError": True}
