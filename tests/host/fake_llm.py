"""A local stand-in for the Anthropic and OpenAI APIs, served by real uvicorn on 127.0.0.1.

It speaks each API's documented wire format (Anthropic `POST /v1/messages`, OpenAI
`POST /v1/chat/completions`) and nothing more: it keeps every request (path, headers, JSON
body) and answers each with the next reply a test scripted. The official SDKs are pointed at
it with `base_url`, so a test checks what the SDK really sent and how the provider read what
came back.

    async with fake_llm() as fake:
        fake.script(anthropic_message([{"type": "text", "text": "hi"}]))
        ...                                  # AnthropicProvider(base_url=fake.url)
        fake.requests[0].body["messages"]
"""

from __future__ import annotations

import contextlib
import itertools
import json
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from tests.http.servers import serving

JSON = dict[str, Any]
_ids = itertools.count(1)


@dataclass
class Reply:
    """One scripted answer: status, JSON body, extra headers."""

    body: JSON
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


class FakeLLM:
    """The ASGI app: answers POSTs to the two API paths from `replies`, in order."""

    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.requests: list[Seen] = []
        self.url = ""  # set once serving

    def script(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        raw = bytearray()
        while True:
            message = await receive()
            raw.extend(message.get("body", b""))
            if not message.get("more_body"):
                break
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        self.requests.append(
            Seen(scope["method"], scope["path"], headers, json.loads(raw or b"null"))
        )
        await _answer(send, self._next(scope["method"], scope["path"]))

    def _next(self, method: str, path: str) -> Reply:
        if method != "POST" or path not in ("/v1/messages", "/v1/chat/completions"):
            return Reply({"error": {"message": f"no route {method} {path}"}}, status=404)
        if not self.replies:
            return Reply({"error": {"message": "the fake has no reply scripted"}}, status=418)
        return self.replies.popleft()


async def _answer(send: Any, reply: Reply) -> None:
    body = json.dumps(reply.body).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    headers += [(k.encode(), v.encode()) for k, v in reply.headers.items()]
    await send({"type": "http.response.start", "status": reply.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


@contextlib.asynccontextmanager
async def fake_llm() -> AsyncIterator[FakeLLM]:
    """A FakeLLM served on an ephemeral port; `.url` is its base URL (no trailing slash)."""
    fake = FakeLLM()
    async with serving(fake) as url:
        fake.url = url
        yield fake


# Anthropic (https://docs.anthropic.com/en/api/messages): a Message object, or
# {"type": "error", "error": {"type", "message"}} with the request id in `request-id`.


def anthropic_message(
    content: list[JSON],
    stop_reason: str = "end_turn",
    model: str = "claude-test",
    usage: tuple[int, int] = (12, 7),
) -> Reply:
    return Reply(
        {
            "id": f"msg_{next(_ids):04d}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": {"input_tokens": usage[0], "output_tokens": usage[1]},
        }
    )


def anthropic_error(
    status: int, error_type: str, message: str, request_id: str = "req_fake1"
) -> Reply:
    body = {
        "type": "error",
        "error": {"type": error_type, "message": message},
        "request_id": request_id,
    }
    return Reply(body, status, {"request-id": request_id, "retry-after-ms": "5"})


# OpenAI (https://platform.openai.com/docs/api-reference/chat/object): a chat.completion
# object, or {"error": {"message", "type", "param", "code"}} with `x-request-id`.


def openai_completion(
    content: str | None,
    tool_calls: list[JSON] | None = None,
    finish_reason: str = "stop",
    model: str = "gpt-test",
    usage: tuple[int, int] = (12, 7),
) -> Reply:
    message: JSON = {"role": "assistant", "content": content, "refusal": None}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return Reply(
        {
            "id": f"chatcmpl-{next(_ids):04d}",
            "object": "chat.completion",
            "created": 1764126000,
            "model": model,
            "choices": [
                {"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}
            ],
            "usage": {
                "prompt_tokens": usage[0],
                "completion_tokens": usage[1],
                "total_tokens": sum(usage),
            },
        }
    )


def openai_tool_call(call_id: str, name: str, arguments: JSON | str) -> JSON:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": text}}


def openai_error(status: int, message: str, error_type: str, code: str | None = None) -> Reply:
    body = {"error": {"message": message, "type": error_type, "param": None, "code": code}}
    return Reply(body, status, {"x-request-id": "req_fake2", "retry-after-ms": "5"})
