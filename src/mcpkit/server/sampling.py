"""What `ctx.sample` sends: Python keywords in, sampling/createMessage params out.

Each keyword of `SamplingOptions` is one CreateMessageRequest param in Python's spelling
(`max_tokens` -> maxTokens, `meta` -> _meta); values may be the `mcpkit.types` models
(SamplingMessage, ModelPreferences, Tool, ToolChoice) or their wire dicts, and None leaves a
param out. The wire (camelCase) spellings that `ctx.sample(**options)` passed through before
still work for one release, with a DeprecationWarning naming the keyword to use.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypedDict

if TYPE_CHECKING:
    from mcpkit.types import ModelPreferences, SamplingMessage, Tool, ToolChoice

JSONObject = dict[str, Any]

# keyword -> wire param
WIRE_NAMES = {
    "max_tokens": "maxTokens",
    "system_prompt": "systemPrompt",
    "temperature": "temperature",
    "stop_sequences": "stopSequences",
    "model_preferences": "modelPreferences",
    "include_context": "includeContext",
    "metadata": "metadata",
    "tools": "tools",
    "tool_choice": "toolChoice",
    "meta": "_meta",
}
_OLD_SPELLINGS = {wire: name for name, wire in WIRE_NAMES.items() if wire != name}
DEFAULT_MAX_TOKENS = 1024


class SamplingOptions(TypedDict, total=False):
    """The keywords of `ctx.sample(...)` and `ctx.sample_request(...)` (see the module
    docstring): `max_tokens` (default 1024), `system_prompt`, `temperature`,
    `stop_sequences`, `model_preferences`, `include_context` (needs the client's
    sampling.context), `metadata` (for the LLM provider), `tools` and `tool_choice` (need
    the client's sampling.tools, 2025-11-25 on), `meta` (the request's `_meta`)."""

    max_tokens: int
    system_prompt: str | None
    temperature: float | None
    stop_sequences: Sequence[str] | None
    model_preferences: ModelPreferences | JSONObject | None
    include_context: Literal["none", "thisServer", "allServers"] | None
    metadata: JSONObject | None
    tools: Sequence[Tool | JSONObject] | None
    tool_choice: ToolChoice | JSONObject | None
    meta: JSONObject | None


def sampling_params(
    messages: Sequence[SamplingMessage | JSONObject] | str,
    options: Mapping[str, Any],
    *,
    stacklevel: int,
) -> JSONObject:
    """The params of a sampling/createMessage request. `messages` may be one string (a user
    message). `stacklevel` points a deprecation warning at the handler's line.

    Raises TypeError for an unknown keyword.
    """
    if isinstance(messages, str):
        wire_messages = [{"role": "user", "content": {"type": "text", "text": messages}}]
    else:
        wire_messages = [_wire(message) for message in messages]
    params: JSONObject = {"messages": wire_messages, "maxTokens": DEFAULT_MAX_TOKENS}
    for name, value in options.items():
        wire = WIRE_NAMES.get(name)
        if wire is None:
            wire = _old_spelling(name, stacklevel + 1)
        if value is not None:
            params[wire] = _wire(value)
    return params


def _old_spelling(name: str, stacklevel: int) -> str:
    keyword = _OLD_SPELLINGS.get(name)
    if keyword is None:
        known = ", ".join(WIRE_NAMES)
        raise TypeError(f"ctx.sample() got an unexpected keyword {name!r}; known: {known}")
    warnings.warn(
        f"ctx.sample({name}=...) is deprecated; use ctx.sample({keyword}=...)",
        DeprecationWarning,
        stacklevel=stacklevel + 1,
    )
    return name


def _wire(value: Any) -> Any:
    """A model, or a list of them (tools), as wire dicts; anything else as it is."""
    if isinstance(value, list | tuple):
        return [_wire(item) for item in value]
    to_wire = getattr(value, "to_wire", None)
    return to_wire() if callable(to_wire) else value
