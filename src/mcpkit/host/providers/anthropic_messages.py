"""Anthropic's Messages API through the official `anthropic` SDK (`mcpkit[anthropic]`).

MCP's sampling shapes were drawn after this API, so the mapping is mostly renaming: an image
is a base64 `source`, a tool definition's `inputSchema` is `input_schema`, a tool_result's
`toolUseId` / `isError` are `tool_use_id` / `is_error`, ToolChoice "required" is "any", and
stop reasons come back in snake case (end_turn -> endTurn). What the API cannot take is an
error before the call: audio anywhere, an image from the assistant, an image type other than
JPEG, PNG, GIF or WebP. `temperature` is not sent: the API version this SDK speaks
(2026-10-21) refuses sampling parameters, and MCP leaves them to the client's discretion.

The SDK is imported when a provider is made, so `import mcpkit.host` never loads it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from mcpkit._extras import optional_dependency
from mcpkit.host.models import ModelInfo
from mcpkit.host.providers import _sdk
from mcpkit.host.providers._content import message_blocks, text, tool_result_parts, unsupported
from mcpkit.host.providers.base import JSONObject, ModelReply, ModelRequest, ProviderError

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic
    from anthropic.types import Message

API = "Anthropic"
IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
STOP_REASONS = {
    "end_turn": "endTurn",
    "max_tokens": "maxTokens",
    "stop_sequence": "stopSequence",
    "tool_use": "toolUse",
}
TOOL_CHOICES = {"auto": "auto", "required": "any", "none": "none"}


class AnthropicProvider(_sdk.SDKProvider):
    """Claude through the Messages API. `api_key` None reads ANTHROPIC_API_KEY (the SDK's
    rules); `base_url` points it elsewhere (a gateway, a test server); `client` is an
    AsyncAnthropic to use instead of making one (then `api_key`, `base_url`, `timeout` and
    `max_retries` are its own). `models` is the table `choose_model` picks from, names or
    ModelInfo; by default the default model alone."""

    api = API
    models: Sequence[ModelInfo]

    def __init__(
        self,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        default_model: str = "claude-sonnet-5-5",
        models: Sequence[ModelInfo | str] | None = None,
        client: AsyncAnthropic | None = None,
        timeout: float | None = None,
        max_retries: int = 2,
    ) -> None:
        if client is None:
            with optional_dependency():
                import anthropic

            options = _sdk.client_options(max_retries, timeout)
            client = anthropic.AsyncAnthropic(api_key=api_key, base_url=base_url, **options)
            self._owned = True
        else:
            self._owned = False
        self.client = client
        self.default_model = default_model
        self.models = _sdk.model_table(models, default_model, "anthropic")
        keys = (api_key, client.api_key, client.auth_token)
        self._secrets = [k for k in keys if isinstance(k, str) and k]

    async def complete(self, request: ModelRequest) -> ModelReply:
        """Send `request` to the Messages API. Raises ProviderError (see the module
        docstring for what cannot be sent; the API's refusals with status and message)."""
        import anthropic

        params = self.params(request)
        message = await self._send(
            anthropic, anthropic.AnthropicError, lambda: self.client.messages.create(**params)
        )
        return _reply(message, params["model"])

    def params(self, request: ModelRequest) -> JSONObject:
        """The keyword arguments of `messages.create` for `request` (also what goes on the
        wire). Raises ProviderError for what the API cannot take."""
        params: JSONObject = {
            "model": request.model or self.default_model,
            "max_tokens": request.max_tokens,
            "messages": [_message(i, m) for i, m in enumerate(request.messages)],
        }
        if request.system:
            params["system"] = request.system
        if request.stop_sequences:
            params["stop_sequences"] = list(request.stop_sequences)
        if request.tools:
            params["tools"] = [_tool(i, t) for i, t in enumerate(request.tools)]
            if request.tool_choice is not None:
                params["tool_choice"] = {"type": _tool_choice(request.tool_choice)}
        if request.metadata is not None:
            params["metadata"] = request.metadata
        return params


def _message(index: int, message: Any) -> JSONObject:
    role, blocks = message_blocks(index, message)
    where = f"messages[{index}].content"
    return {
        "role": role,
        "content": [_block(f"{where}[{i}]", role, b) for i, b in enumerate(blocks)],
    }


def _block(where: str, role: str, block: JSONObject) -> JSONObject:
    kind = block.get("type")
    if kind == "text":
        return text(str(block.get("text", "")))
    if kind == "image":
        if role != "user":
            raise unsupported(where, "image", API, "only the user's messages may hold images")
        return _image(where, block)
    if kind == "tool_use":
        return {
            "type": "tool_use",
            "id": block.get("id"),
            "name": block.get("name"),
            "input": block.get("input") or {},
        }
    if kind == "tool_result":
        parts = tool_result_parts(where, block)
        parts = [_result_part(f"{where}.content[{i}]", p) for i, p in enumerate(parts)]
        result: JSONObject = {
            "type": "tool_result",
            "tool_use_id": block["toolUseId"],
            "content": parts,
        }
        if block.get("isError"):
            result["is_error"] = True
        return result
    if kind == "audio":
        raise unsupported(where, "audio", API, "the Messages API takes no audio")
    raise unsupported(where, repr(kind), API, "it is no MCP sampling content type")


def _result_part(where: str, part: JSONObject) -> JSONObject:
    if part["type"] == "image":
        return _image(where, part)
    if part["type"] == "audio":
        raise unsupported(
            where, "audio", API, "the Messages API takes no audio, not even in a tool result"
        )
    return text(str(part.get("text", "")))


def _image(where: str, block: JSONObject) -> JSONObject:
    mime = block.get("mimeType")
    if mime not in IMAGE_TYPES:
        raise unsupported(where, f"{mime}", API, f"it takes {', '.join(IMAGE_TYPES)}")
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": mime, "data": block.get("data")},
    }


def _tool(index: int, tool: JSONObject) -> JSONObject:
    if not isinstance(tool.get("name"), str):
        raise ProviderError(f"tools[{index}]: a tool needs a name")
    schema = tool.get("inputSchema") or {"type": "object"}
    definition: JSONObject = {"name": tool["name"], "input_schema": schema}
    if tool.get("description"):
        definition["description"] = tool["description"]
    return definition


def _tool_choice(choice: JSONObject) -> str:
    mode = choice.get("mode", "auto")
    if mode not in TOOL_CHOICES:
        raise ProviderError(f"tool_choice: mode must be auto, required or none, not {mode!r}")
    return TOOL_CHOICES[mode]


def _reply(message: Message, asked: str) -> ModelReply:
    content: list[JSONObject] = []
    for block in message.content:
        if block.type == "text":
            content.append(text(block.text))
        elif block.type == "tool_use":
            content.append(
                {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
            )
        # thinking and server-tool blocks have no MCP counterpart: left out
    reason = message.stop_reason
    usage = {
        "input_tokens": message.usage.input_tokens,
        "output_tokens": message.usage.output_tokens,
    }
    return ModelReply(
        message.model or asked, content, STOP_REASONS.get(reason, reason) if reason else None, usage
    )
