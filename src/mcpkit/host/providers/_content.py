"""Reading MCP sampling messages the same way for every provider.

Both adapters walk the same shapes: a message's content is one block or a list of blocks,
and a tool_result holds the blocks a tool returned (CallToolResult content: text, image,
audio, resource links, embedded resources) plus, maybe, structuredContent. No chat API takes
resources, so they become what the model can read: a link or a text resource as text, an
image resource as an image, anything else as a line saying what it was. Errors name the
place in the request (`messages[2].content[0]`) so a caller can find the block at fault.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from mcpkit.host.providers.base import JSONObject, ProviderError

ROLES = ("user", "assistant")


def message_blocks(index: int, message: Any) -> tuple[str, list[JSONObject]]:
    """A SamplingMessage's role and its content as a list of blocks.

    Raises ProviderError for a message that is not an MCP SamplingMessage."""
    where = f"messages[{index}]"
    if not isinstance(message, Mapping):
        raise ProviderError(f"{where}: a sampling message is an object, not {message!r}")
    role = message.get("role")
    if role not in ROLES:
        raise ProviderError(f"{where}: role must be 'user' or 'assistant', not {role!r}")
    content = message.get("content")
    blocks = [content] if isinstance(content, Mapping) else content
    if not isinstance(blocks, list) or not all(isinstance(b, Mapping) for b in blocks):
        raise ProviderError(f"{where}: content must be a block or a list of blocks")
    return role, [dict(b) for b in blocks]


def tool_result_parts(where: str, block: JSONObject) -> list[JSONObject]:
    """The blocks of a tool_result as text, image and audio blocks (see the module
    docstring); structuredContent as JSON text when no text block carries it already.

    Raises ProviderError for a tool_result without a toolUseId or a list of content."""
    if not isinstance(block.get("toolUseId"), str):
        raise ProviderError(f"{where}: a tool_result needs the toolUseId of its tool_use")
    content = block.get("content", [])
    if not isinstance(content, list):
        raise ProviderError(f"{where}: a tool_result's content is a list of blocks")
    parts = [_readable(item) for item in content if isinstance(item, Mapping)]
    structured = block.get("structuredContent")
    if structured is not None and not any(p["type"] == "text" for p in parts):
        parts.append(text(json.dumps(structured, ensure_ascii=False)))
    return parts


def text(value: str) -> JSONObject:
    return {"type": "text", "text": value}


def unsupported(where: str, kind: str, api: str, why: str) -> ProviderError:
    return ProviderError(f"{where}: {api} cannot take this {kind} block: {why}")


def _readable(item: Mapping[str, Any]) -> JSONObject:
    kind = item.get("type")
    if kind in ("text", "image", "audio"):
        return dict(item)
    if kind == "resource_link":
        about = f" ({item['description']})" if item.get("description") else ""
        return text(f"Resource link: {item.get('name', '')} <{item.get('uri', '')}>{about}")
    if kind == "resource" and isinstance(item.get("resource"), Mapping):
        return _embedded(item["resource"])
    return text(f"[a {kind} block the model cannot read]")


def _embedded(resource: Mapping[str, Any]) -> JSONObject:
    uri, mime = resource.get("uri", ""), resource.get("mimeType") or ""
    if isinstance(resource.get("text"), str):
        return text(f"Resource {uri}:\n{resource['text']}")
    if mime.startswith("image/") and isinstance(resource.get("blob"), str):
        return {"type": "image", "data": resource["blob"], "mimeType": mime}
    return text(f"[resource {uri} ({mime or 'binary'}), not shown: the model reads no binary]")
