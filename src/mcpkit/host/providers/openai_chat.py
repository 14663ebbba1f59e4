"""OpenAI's Chat Completions API through the official `openai` SDK (`mcpkit[openai]`), the
API most local and hosted OpenAI-compatible servers speak (`base_url`).

Chat Completions keeps tools apart from content, so the mapping moves blocks around:
- the system prompt is the first message, role "system";
- an assistant's tool_use blocks are its `tool_calls` (arguments as a JSON string) and its
  text is `content`;
- each tool_result is a message of its own, role "tool" with the `tool_call_id`; its text is
  the content ("Error: " first when isError, since the API has no such flag). A tool message
  holds text only, so a result's images follow in a user message after the tool messages;
- a user message of one text block is a plain string (every server takes that), others are
  content parts: images as data: URLs, audio as `input_audio` (WAV or MP3, all the API
  takes);
- ToolChoice modes are the API's own words; `max_tokens` goes as `max_completion_tokens`
  (`max_tokens` is deprecated there and refused by reasoning models) unless
  `max_tokens_field="max_tokens"` for a server that knows only the old name;
- finish reasons come back as MCP stop reasons: stop -> endTurn, length -> maxTokens,
  tool_calls -> toolUse, and "stop" with tool calls is toolUse too (some servers say so); a
  stop sequence also ends in "stop": the API does not tell them apart.

The SDK is imported when a provider is made, so `import mcpkit.host` never loads it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from mcpkit._extras import optional_dependency
from mcpkit.host.models import ModelInfo
from mcpkit.host.providers import _sdk
from mcpkit.host.providers._content import message_blocks, text, tool_result_parts, unsupported
from mcpkit.host.providers.base import JSONObject, ModelReply, ModelRequest, ProviderError

if TYPE_CHECKING:
    from openai import AsyncOpenAI
    from openai.types.chat import ChatCompletion

API = "OpenAI"
AUDIO_FORMATS = {
    "audio/wav": "wav",
    "audio/x-wav": "wav",
    "audio/wave": "wav",
    "audio/mpeg": "mp3",
    "audio/mp3": "mp3",
}
STOP_REASONS = {"stop": "endTurn", "length": "maxTokens", "tool_calls": "toolUse"}
TOOL_CHOICES = ("auto", "required", "none")


class OpenAIProvider(_sdk.SDKProvider):
    """A model behind the Chat Completions API. `api_key` None reads OPENAI_API_KEY (the
    SDK's rules); `base_url` selects another server ("http://localhost:11434/v1"); `client`
    is an AsyncOpenAI to use instead of making one (then `api_key`, `base_url`, `timeout` and
    `max_retries` are its own). `models` is the table `choose_model` picks from, names or
    ModelInfo; by default the default model alone."""

    api = API
    models: Sequence[ModelInfo]

    def __init__(
        self,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        default_model: str = "gpt-5.5",
        models: Sequence[ModelInfo | str] | None = None,
        client: AsyncOpenAI | None = None,
        timeout: float | None = None,
        max_retries: int = 2,
        max_tokens_field: Literal["max_completion_tokens", "max_tokens"] = "max_completion_tokens",
    ) -> None:
        if client is None:
            with optional_dependency():
                import openai

            options = _sdk.client_options(max_retries, timeout)
            try:
                client = openai.AsyncOpenAI(api_key=api_key, base_url=base_url, **options)
            except openai.OpenAIError as exc:  # no key given and none in the environment
                raise _sdk.other_error(API, exc, [api_key or ""]) from None
            self._owned = True
        else:
            self._owned = False
        self.client = client
        self.default_model = default_model
        self.max_tokens_field = max_tokens_field
        self.models = _sdk.model_table(models, default_model, "openai")
        self._secrets = [k for k in (api_key, client.api_key) if isinstance(k, str) and k]

    async def complete(self, request: ModelRequest) -> ModelReply:
        """Send `request` to the Chat Completions API. Raises ProviderError (a block the API
        cannot take; the API's refusals with status and message; no answer)."""
        import openai

        params = self.params(request)
        completion = await self._send(
            openai, openai.OpenAIError, lambda: self.client.chat.completions.create(**params)
        )
        return _reply(completion, params["model"])

    def params(self, request: ModelRequest) -> JSONObject:
        """The keyword arguments of `chat.completions.create` for `request` (also what goes
        on the wire). Raises ProviderError for what the API cannot take."""
        messages: list[JSONObject] = []
        if request.system:
            messages.append({"role": "system", "content": request.system})
        for index, message in enumerate(request.messages):
            messages.extend(_messages(index, message))
        params: JSONObject = {
            "model": request.model or self.default_model,
            "messages": messages,
            self.max_tokens_field: request.max_tokens,
        }
        if request.stop_sequences:
            params["stop"] = list(request.stop_sequences)
        if request.temperature is not None:
            params["temperature"] = request.temperature
        if request.tools:
            params["tools"] = [_tool(i, t) for i, t in enumerate(request.tools)]
            if request.tool_choice is not None:
                params["tool_choice"] = _tool_choice(request.tool_choice)
        if request.metadata is not None:
            params["metadata"] = request.metadata
        return params


def _messages(index: int, message: Any) -> list[JSONObject]:
    """One MCP message as one or more Chat Completions messages."""
    role, blocks = message_blocks(index, message)
    where = f"messages[{index}].content"
    if role == "assistant":
        return [_assistant(where, blocks)]
    tools: list[JSONObject] = []  # the tool messages come first: right after the tool_calls
    parts: list[JSONObject] = []
    result_images: list[JSONObject] = []
    for i, block in enumerate(blocks):
        if block.get("type") == "tool_result":
            message_text, images = _tool_result(f"{where}[{i}]", block)
            tools.append(
                {"role": "tool", "tool_call_id": block["toolUseId"], "content": message_text}
            )
            result_images += images
        else:
            parts.append(_user_part(f"{where}[{i}]", block))
    rest = result_images + parts
    if len(rest) == 1 and rest[0]["type"] == "text":
        return [*tools, {"role": "user", "content": rest[0]["text"]}]  # what every server takes
    return tools + ([{"role": "user", "content": rest}] if rest else [])


def _assistant(where: str, blocks: list[JSONObject]) -> JSONObject:
    texts: list[str] = []
    calls: list[JSONObject] = []
    for i, block in enumerate(blocks):
        kind = block.get("type")
        if kind == "text":
            texts.append(str(block.get("text", "")))
        elif kind == "tool_use":
            arguments = json.dumps(block.get("input") or {}, ensure_ascii=False)
            calls.append(
                {
                    "id": block.get("id"),
                    "type": "function",
                    "function": {"name": block.get("name"), "arguments": arguments},
                }
            )
        else:
            raise unsupported(
                f"{where}[{i}]",
                repr(kind),
                API,
                "an assistant message holds text and tool calls only",
            )
    message: JSONObject = {"role": "assistant", "content": "".join(texts) if texts else None}
    if calls:
        message["tool_calls"] = calls
    return message


def _tool_result(where: str, block: JSONObject) -> tuple[str, list[JSONObject]]:
    """The text of a tool message, and the result's images as user content parts."""
    texts: list[str] = []
    images: list[JSONObject] = []
    for i, part in enumerate(tool_result_parts(where, block)):
        if part["type"] == "image":
            if not images:
                images.append(text(f"The images of tool call {block['toolUseId']}:"))
            images.append(_user_part(f"{where}.content[{i}]", part))
        elif part["type"] == "audio":
            raise unsupported(
                f"{where}.content[{i}]", "audio", API, "a tool message holds text only"
            )
        else:
            texts.append(str(part.get("text", "")))
    joined = "\n".join(texts)
    return (f"Error: {joined}" if block.get("isError") else joined), images


def _user_part(where: str, block: JSONObject) -> JSONObject:
    kind = block.get("type")
    if kind == "text":
        return text(str(block.get("text", "")))
    if kind == "image":
        url = f"data:{block.get('mimeType')};base64,{block.get('data')}"
        return {"type": "image_url", "image_url": {"url": url}}
    if kind == "audio":
        audio_format = AUDIO_FORMATS.get(str(block.get("mimeType")))
        if audio_format is None:
            raise unsupported(
                where, f"{block.get('mimeType')}", API, "it takes WAV and MP3 audio only"
            )
        return {
            "type": "input_audio",
            "input_audio": {"data": block.get("data"), "format": audio_format},
        }
    if kind == "tool_use":
        raise unsupported(where, "tool_use", API, "only the assistant calls tools")
    raise unsupported(where, repr(kind), API, "it is no MCP sampling content type")


def _tool(index: int, tool: JSONObject) -> JSONObject:
    if not isinstance(tool.get("name"), str):
        raise ProviderError(f"tools[{index}]: a tool needs a name")
    function: JSONObject = {
        "name": tool["name"],
        "parameters": tool.get("inputSchema") or {"type": "object"},
    }
    if tool.get("description"):
        function["description"] = tool["description"]
    return {"type": "function", "function": function}


def _tool_choice(choice: JSONObject) -> str:
    mode = choice.get("mode", "auto")
    if mode not in TOOL_CHOICES:
        raise ProviderError(f"tool_choice: mode must be auto, required or none, not {mode!r}")
    return str(mode)


def _reply(completion: ChatCompletion, asked: str) -> ModelReply:
    if not completion.choices:
        raise ProviderError(f"{API}: the answer holds no choice")
    choice = completion.choices[0]
    message = choice.message
    content: list[JSONObject] = []
    said = message.content or message.refusal
    if said:
        content.append(text(said))
    for call in message.tool_calls or ():
        if call.type != "function":
            continue  # custom (free-form) tools are never offered, so never called
        content.append(
            {
                "type": "tool_use",
                "id": call.id,
                "name": call.function.name,
                "input": _arguments(call.function.name, call.function.arguments),
            }
        )
    reason = STOP_REASONS.get(choice.finish_reason, choice.finish_reason)
    if reason == "endTurn" and any(b["type"] == "tool_use" for b in content):
        reason = "toolUse"  # servers that say "stop" after tool calls (Ollama did)
    usage = None
    if completion.usage is not None:
        usage = {
            "input_tokens": completion.usage.prompt_tokens,
            "output_tokens": completion.usage.completion_tokens,
        }
    return ModelReply(completion.model or asked, content, reason or None, usage)


def _arguments(name: str, arguments: str) -> JSONObject:
    try:
        value = json.loads(arguments or "{}")
    except (ValueError, RecursionError):  # json.loads raises the latter on deep nesting
        raise ProviderError(
            f"{API}: the model called {name} with arguments that are no JSON: {arguments[:200]!r}"
        ) from None
    if not isinstance(value, dict):
        raise ProviderError(
            f"{API}: the model called {name} with arguments that are no object: {arguments[:200]!r}"
        )
    return value
