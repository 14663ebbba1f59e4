"""The host's models: one small interface, adapters for two APIs, and a scripted stand-in.

A provider takes a `ModelRequest` and gives a `ModelReply`, both in MCP's sampling shapes
(see `base`), so a server's `sampling/createMessage` and the host's agent loop use any
provider alike. `AnthropicProvider` speaks Anthropic's Messages API, `OpenAIProvider` the
Chat Completions API of OpenAI and of the servers that copy it, each through its official SDK
(the `mcpkit[anthropic]` and `mcpkit[openai]` extras, imported only when a provider is made);
`ScriptedProvider` answers from a script, for tests and demos. Every failure is a
`ProviderError`. docs/providers.md shows them in use.
"""

from mcpkit.host.providers.anthropic_messages import AnthropicProvider
from mcpkit.host.providers.base import ModelReply, ModelRequest, Provider, ProviderError
from mcpkit.host.providers.openai_chat import OpenAIProvider
from mcpkit.host.providers.scripted import ScriptedProvider

__all__ = [
    "AnthropicProvider",
    "ModelReply",
    "ModelRequest",
    "OpenAIProvider",
    "Provider",
    "ProviderError",
    "ScriptedProvider",
]
