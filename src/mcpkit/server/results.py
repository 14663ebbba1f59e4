"""What a tool returns -> a CallToolResult dict.

Without structured output (no return annotation, or one that promises content):

- a str is one text block; None is no content;
- an `Image`, `Audio`, `File` or `ResourceLink` (mcpkit.server.content), an mcpkit.types
  content model, or a dict shaped like a content block ({"type": "text", "text": ...}) is
  that block;
- a list or tuple gives one block per item (by these same rules);
- anything else (numbers, dicts, pydantic models, dataclasses, ...) is its JSON as text;
- a full CallToolResult — an mcpkit.types.CallToolResult model, or a dict with a "content"
  list and only CallToolResult keys — passes through unchanged.

With structured output (`Output` from the return annotation), the value is validated and
converted, sent as `structuredContent` ({"result": value} when it is not an object), and
rendered as JSON text in `content` for clients that do not read structured content; a string
result is its own text. A value that does not fit the schema is a tool error, not a crash.

`for_revision` adapts a result to an older client: no structuredContent before 2025-06-18,
resource links as text before 2025-06-18, audio as a text note before 2025-03-26.
"""

from __future__ import annotations

from typing import Any

import orjson

from mcpkit.errors import MCPError
from mcpkit.protocol.jsonrpc import dumps
from mcpkit.server.content import Content
from mcpkit.server.schema import Output

JSONObject = dict[str, Any]
_BLOCK_KEYS = {
    "text": "text",
    "image": "data",
    "audio": "data",
    "resource": "resource",
    "resource_link": "uri",
}
_RESULT_KEYS = frozenset({"content", "isError", "structuredContent", "_meta"})
STRUCTURED_SINCE = "2025-06-18"


def text_content(text: str) -> JSONObject:
    return {"type": "text", "text": text}


def error_result(message: str) -> JSONObject:
    """A tool-level failure the model can read and act on."""
    return {"content": [text_content(message)], "isError": True}


class OutputMismatch(MCPError, ValueError):
    """A tool returned a value its outputSchema does not allow."""


# -- unstructured -----------------------------------------------------------------------------


def to_call_tool_result(value: Any) -> JSONObject:
    """The CallToolResult for a return value without structured output."""
    if type(value) is str:
        return {"content": [{"type": "text", "text": value}], "isError": False}
    if value is None:
        return {"content": [], "isError": False}
    whole = full_result(value)
    if whole is not None:
        return whole
    if isinstance(value, list | tuple):
        return {"content": [content_block(item) for item in value], "isError": False}
    return {"content": [content_block(value)], "isError": False}


def full_result(value: Any) -> JSONObject | None:
    """`value` as a complete CallToolResult, or None when it is not one."""
    if type(value) is dict:
        content = value.get("content")
        if (
            type(content) is list
            and value.keys() <= _RESULT_KEYS
            and all(_is_block(block) for block in content)
        ):
            return value
        return None
    if type(value).__name__ == "CallToolResult" and hasattr(value, "model_dump"):
        dumped: JSONObject = _dump_model(value)
        return dumped
    return None


def content_block(item: Any) -> JSONObject:
    if isinstance(item, str):
        return text_content(item)
    if isinstance(item, Content):
        return item.to_content()
    if _is_block(item):
        return item  # type: ignore[no-any-return]
    if hasattr(item, "to_wire") and type(item).__module__.startswith("mcpkit.types"):
        return item.to_wire()  # type: ignore[no-any-return]
    return text_content(to_json(item))


def _is_block(item: Any) -> bool:
    if type(item) is not dict:
        return False
    key = _BLOCK_KEYS.get(item.get("type"))  # type: ignore[arg-type]
    return key is not None and key in item


def to_json(value: Any) -> str:
    """Compact JSON text for any value a tool may return."""
    return dumps(value, default=_jsonable, option=orjson.OPT_NON_STR_KEYS).decode()


def _jsonable(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return _dump_model(value)
    if isinstance(value, set | frozenset):
        return list(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def _dump_model(model: Any) -> Any:
    if hasattr(model, "to_wire"):
        return model.to_wire()
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


# -- structured -------------------------------------------------------------------------------


def structured_result(value: Any, output: Output) -> JSONObject:
    """The CallToolResult for a value checked against `output`. Raises OutputMismatch."""
    try:
        data = output.convert(value)
    except ValueError as exc:
        raise OutputMismatch(str(exc)) from None
    if type(data) is str:
        text = data
    else:
        try:
            text = dumps(data).decode()
        except TypeError:
            # Data JSON cannot carry as it is (a set, a non-str key): send its JSON form.
            text = to_json(data)
            data = orjson.loads(text)
    structured = {"result": data} if output.wrap else data
    return {"content": [text_content(text)], "structuredContent": structured, "isError": False}


def check_full_result(result: JSONObject, output: Output) -> None:
    """A CallToolResult a tool built itself must still keep its outputSchema's promise.

    Raises OutputMismatch.
    """
    if result.get("isError") or "structuredContent" not in result:
        return
    structured = result["structuredContent"]
    if output.wrap:
        if type(structured) is not dict or "result" not in structured:
            raise OutputMismatch('structuredContent must be {"result": ...}')
        structured = structured["result"]
    try:
        output.convert(structured)
    except ValueError as exc:
        raise OutputMismatch(str(exc)) from None


# -- older clients ----------------------------------------------------------------------------


def for_revision(result: JSONObject, revision: str) -> JSONObject:
    """`result` as a client speaking `revision` (older than 2025-06-18) can read it."""
    if "structuredContent" in result:
        result = {k: v for k, v in result.items() if k != "structuredContent"}
    content = result.get("content")
    if type(content) is list and any(_too_new(block, revision) for block in content):
        content = [_older_block(block, revision) for block in content]
        result = {**result, "content": content}
    return result


def _too_new(block: Any, revision: str) -> bool:
    kind = block.get("type") if type(block) is dict else None
    return kind == "resource_link" or (kind == "audio" and revision < "2025-03-26")


def _older_block(block: Any, revision: str) -> Any:
    if not _too_new(block, revision):
        return block
    if block["type"] == "resource_link":
        name = block.get("name") or block["uri"]
        return text_content(f"Resource: {name} <{block['uri']}>")
    return text_content(f"[audio ({block.get('mimeType', 'unknown type')}) not shown]")
