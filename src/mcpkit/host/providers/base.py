"""What every provider speaks: a request and a reply in MCP's own sampling shapes.

A server's `sampling/createMessage` and the host's agent loop both talk to a model, so both
use one vocabulary: MCP `SamplingMessage` dicts (`{"role", "content": block | [blocks]}`, the
2025-11-25 blocks text / image / audio / tool_use / tool_result) and MCP `Tool` dicts. Each
provider translates them to its API and back, so nothing above it knows which API answered.
A block the API cannot take (audio for Anthropic, say) is a `ProviderError` that says which
block and why, raised before anything is sent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from mcpkit.errors import MCPError
from mcpkit.host.models import ModelInfo

JSONObject = dict[str, Any]


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """One call to a model. `messages` are MCP SamplingMessage dicts; `tools` MCP Tool dicts
    (name, description, inputSchema); `tool_choice` an MCP ToolChoice ({"mode": "auto" |
    "required" | "none"}); `model` None means the provider's default model; `metadata` goes
    to the API as it is (its format is the provider's, as MCP says)."""

    messages: Sequence[JSONObject]
    model: str | None = None
    system: str | None = None
    max_tokens: int = 1024
    stop_sequences: Sequence[str] = ()
    temperature: float | None = None
    tools: Sequence[JSONObject] = ()
    tool_choice: JSONObject | None = None
    metadata: JSONObject | None = None


@dataclass(frozen=True, slots=True)
class ModelReply:
    """What the model said: MCP blocks (text and tool_use), the model that said it, why it
    stopped in MCP's names ("endTurn", "stopSequence", "maxTokens", "toolUse"; another
    reason is the API's own string) and, when the API tells, the tokens used
    ({"input_tokens": n, "output_tokens": n})."""

    model: str
    content: list[JSONObject]
    stop_reason: str | None
    usage: JSONObject | None = None

    @property
    def text(self) -> str:
        """The text blocks, joined (tool_use blocks left out)."""
        return "".join(b["text"] for b in self.content if b.get("type") == "text")

    @property
    def tool_uses(self) -> list[JSONObject]:
        """The tool_use blocks: the calls the model asks for, in order."""
        return [b for b in self.content if b.get("type") == "tool_use"]


@runtime_checkable
class Provider(Protocol):
    """A model API. `models` is what it serves, for `choose_model`; `complete` raises
    ProviderError for anything that went wrong, and nothing else."""

    models: Sequence[ModelInfo]

    async def complete(self, request: ModelRequest) -> ModelReply: ...


class ProviderError(MCPError):
    """A model call failed: the request could not be put in the API's terms, the API said
    no (`status`, the API's `error_type` and message in the text), or it could not be
    reached. The message never holds an API key or an Authorization header."""

    def __init__(
        self, message: str, *, status: int | None = None, error_type: str | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.error_type = error_type
