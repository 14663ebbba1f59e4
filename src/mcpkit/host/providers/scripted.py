"""A provider that answers from a script: for tests and demos, no model and no network.

`ScriptedProvider(["Hi!", {"content": [tool_use...]}, reply])` answers each request with the
next reply; `ScriptedProvider(function)` asks the function (sync or async) each time. Every
request is kept in `.requests`, so a test can check what an agent loop or a sampling handler
asked the model. A reply may be a ModelReply, a string (one text block) or a dict with
`content` (a string or MCP blocks) and optionally `model`, `stop_reason` and `usage`; without
a stop reason it is "toolUse" when the content calls a tool, else "endTurn".
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeAlias

from mcpkit.host.models import ModelInfo
from mcpkit.host.providers.base import JSONObject, ModelReply, ModelRequest, ProviderError

Scripted: TypeAlias = ModelReply | JSONObject | str
Script: TypeAlias = Sequence[Scripted] | Callable[[ModelRequest], Scripted | Awaitable[Scripted]]


class ScriptedProvider:
    """Replies from a list, in order, or from a function of the request (see the module
    docstring). Raises ProviderError once the list is used up, and for a reply that is none
    of the shapes above."""

    models: Sequence[ModelInfo]

    def __init__(
        self, script: Script, *, models: Sequence[ModelInfo] = (ModelInfo("scripted"),)
    ) -> None:
        self.script = script
        self.models = models
        self.requests: list[ModelRequest] = []

    async def complete(self, request: ModelRequest) -> ModelReply:
        self.requests.append(request)
        if callable(self.script):
            answer = self.script(request)
            reply = await answer if inspect.isawaitable(answer) else answer
        else:
            count = len(self.requests)
            if count > len(self.script):
                raise ProviderError(
                    f"ScriptedProvider: request {count} has no reply, the script holds "
                    f"{len(self.script)}; last message: {_last(request)!r}"
                )
            reply = self.script[count - 1]
        return _as_reply(reply, request.model or self.models[0].name)


def _as_reply(reply: Any, model: str) -> ModelReply:
    if isinstance(reply, ModelReply):
        return reply
    if isinstance(reply, str):
        return ModelReply(model, [{"type": "text", "text": reply}], "endTurn")
    if isinstance(reply, Mapping) and "content" in reply:
        content = reply["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
        calls = any(b.get("type") == "tool_use" for b in blocks)
        reason = reply.get("stop_reason", "toolUse" if calls else "endTurn")
        return ModelReply(reply.get("model", model), blocks, reason, reply.get("usage"))
    raise ProviderError(
        f"ScriptedProvider: a reply is a ModelReply, a str or a dict with content, not {reply!r}"
    )


def _last(request: ModelRequest) -> Any:
    return request.messages[-1].get("content") if request.messages else None
