"""The providers against a local server speaking each API's documented wire format
(tests/host/fake_llm.py, real uvicorn), through the official SDKs pointed at it with
`base_url`: what goes on the wire for MCP messages, tools, stop sequences and limits; how
replies, stop reasons and API errors come back; what cannot be sent. The scripted provider,
the import cost, and a live smoke test per API when a real key is in the environment."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest

from mcpkit.host.models import ModelInfo
from mcpkit.host.providers import (
    AnthropicProvider,
    ModelReply,
    ModelRequest,
    OpenAIProvider,
    Provider,
    ProviderError,
    ScriptedProvider,
)
from tests.host.fake_llm import (
    FakeLLM,
    anthropic_error,
    anthropic_message,
    fake_llm,
    openai_completion,
    openai_error,
    openai_tool_call,
)
from tests.http.servers import unused_port

KEY = "test-key-QWERTY-0123456789"  # recognisable, and not shaped like any real key
PIXEL = (  # a 1x1 PNG
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg=="
)
ADD = {
    "name": "add",
    "description": "Add two numbers.",
    "inputSchema": {
        "type": "object",
        "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
        "required": ["a", "b"],
    },
}
ASKED = {"role": "user", "content": {"type": "text", "text": "What is 2 + 3?"}}
CALLED = {
    "role": "assistant",
    "content": [
        {"type": "text", "text": "Let me add."},
        {"type": "tool_use", "id": "call_1", "name": "add", "input": {"a": 2, "b": 3}},
    ],
}
ANSWERED = {
    "role": "user",
    "content": [
        {
            "type": "tool_result",
            "toolUseId": "call_1",
            "content": [
                {"type": "text", "text": "5"},
                {"type": "image", "data": PIXEL, "mimeType": "image/png"},
            ],
        }
    ],
}
FAILED = {
    "role": "user",
    "content": [
        {
            "type": "tool_result",
            "toolUseId": "call_1",
            "content": [{"type": "text", "text": "overflow"}],
            "isError": True,
        }
    ],
}


def hello(**fields: Any) -> ModelRequest:
    return ModelRequest(
        [{"role": "user", "content": [{"type": "text", "text": "Hello"}]}], **fields
    )


@pytest.fixture
async def fake() -> AsyncIterator[FakeLLM]:
    async with fake_llm() as served:
        yield served


@pytest.fixture
async def claude(fake: FakeLLM) -> AsyncIterator[AnthropicProvider]:
    async with AnthropicProvider(api_key=KEY, base_url=fake.url, max_retries=0) as provider:
        yield provider


@pytest.fixture
async def gpt(fake: FakeLLM) -> AsyncIterator[OpenAIProvider]:
    async with OpenAIProvider(api_key=KEY, base_url=f"{fake.url}/v1", max_retries=0) as provider:
        yield provider


# Anthropic Messages API


async def test_anthropic_text_round_trip_with_system_stops_and_limits(
    fake: FakeLLM, claude: AnthropicProvider
) -> None:
    fake.script(anthropic_message([{"type": "text", "text": "Hi there"}], model="claude-x"))
    request = hello(
        system="Be brief.", max_tokens=77, stop_sequences=["END", "STOP"], temperature=0.2
    )
    reply = await claude.complete(request)

    assert reply == ModelReply(
        "claude-x",
        [{"type": "text", "text": "Hi there"}],
        "endTurn",
        {"input_tokens": 12, "output_tokens": 7},
    )
    seen = fake.requests[0]
    assert (seen.method, seen.path) == ("POST", "/v1/messages")
    assert seen.body == {
        "model": "claude-sonnet-5-5",
        "max_tokens": 77,
        "system": "Be brief.",
        "stop_sequences": ["END", "STOP"],
        "messages": [{"role": "user", "content": [{"type": "text", "text": "Hello"}]}],
    }  # no temperature: the API version the SDK speaks refuses it
    assert seen.headers["authorization"] == f"Bearer {KEY}"
    assert seen.headers["anthropic-version"]


async def test_anthropic_tools_go_out_as_input_schema_and_tool_use_comes_back(
    fake: FakeLLM, claude: AnthropicProvider
) -> None:
    fake.script(
        anthropic_message(
            [
                {"type": "text", "text": "Adding."},
                {"type": "tool_use", "id": "toolu_9", "name": "add", "input": {"a": 2, "b": 3}},
            ],
            stop_reason="tool_use",
        )
    )
    reply = await claude.complete(
        ModelRequest([ASKED], model="claude-y", tools=[ADD], tool_choice={"mode": "required"})
    )

    assert reply.stop_reason == "toolUse"
    assert reply.content[1] == {
        "type": "tool_use",
        "id": "toolu_9",
        "name": "add",
        "input": {"a": 2, "b": 3},
    }
    assert reply.tool_uses == [reply.content[1]] and reply.text == "Adding."
    body = fake.requests[0].body
    assert body["model"] == "claude-y"
    assert body["tools"] == [
        {"name": "add", "description": "Add two numbers.", "input_schema": ADD["inputSchema"]}
    ]
    assert body["tool_choice"] == {"type": "any"}
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "What is 2 + 3?"}]}
    ]


@pytest.mark.parametrize(("mode", "wire"), [("auto", "auto"), ("none", "none")])
async def test_anthropic_tool_choice_modes(
    fake: FakeLLM, claude: AnthropicProvider, mode: str, wire: str
) -> None:
    fake.script(anthropic_message([{"type": "text", "text": "ok"}]))
    await claude.complete(ModelRequest([ASKED], tools=[ADD], tool_choice={"mode": mode}))
    assert fake.requests[0].body["tool_choice"] == {"type": wire}


async def test_anthropic_tool_results_go_back_as_blocks_with_images_and_is_error(
    fake: FakeLLM, claude: AnthropicProvider
) -> None:
    fake.script(anthropic_message([{"type": "text", "text": "It is 5."}]))
    await claude.complete(ModelRequest([ASKED, CALLED, ANSWERED], tools=[ADD]))
    fake.script(anthropic_message([{"type": "text", "text": "It failed."}]))
    await claude.complete(ModelRequest([ASKED, CALLED, FAILED], tools=[ADD]))

    first, second = (r.body["messages"] for r in fake.requests)
    assert first[1] == {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Let me add."},
            {"type": "tool_use", "id": "call_1", "name": "add", "input": {"a": 2, "b": 3}},
        ],
    }
    image = {"type": "base64", "media_type": "image/png", "data": PIXEL}
    assert first[2] == {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "call_1",
                "content": [{"type": "text", "text": "5"}, {"type": "image", "source": image}],
            }
        ],
    }
    assert second[2]["content"][0]["is_error"] is True
    assert second[2]["content"][0]["content"] == [{"type": "text", "text": "overflow"}]


async def test_anthropic_user_images_and_resources_in_results(
    fake: FakeLLM, claude: AnthropicProvider
) -> None:
    fake.script(anthropic_message([{"type": "text", "text": "A pixel."}]))
    picture = {"type": "image", "data": PIXEL, "mimeType": "image/png"}
    result = {
        "type": "tool_result",
        "toolUseId": "call_1",
        "content": [
            {"type": "resource_link", "uri": "file:///a.txt", "name": "a.txt"},
            {"type": "resource", "resource": {"uri": "file:///b.txt", "text": "bee"}},
        ],
        "structuredContent": {"sum": 5},
    }
    await claude.complete(
        ModelRequest(
            [{"role": "user", "content": [picture]}, CALLED, {"role": "user", "content": result}]
        )
    )
    messages = fake.requests[0].body["messages"]
    assert messages[0]["content"] == [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PIXEL}}
    ]
    assert [p["text"] for p in messages[2]["content"][0]["content"]] == [
        "Resource link: a.txt <file:///a.txt>",
        "Resource file:///b.txt:\nbee",
    ]


@pytest.mark.parametrize(
    ("api", "mcp"),
    [
        ("end_turn", "endTurn"),
        ("max_tokens", "maxTokens"),
        ("stop_sequence", "stopSequence"),
        ("tool_use", "toolUse"),
        ("refusal", "refusal"),  # no MCP name: the API's own string
    ],
)
async def test_anthropic_stop_reasons_in_mcp_names(
    fake: FakeLLM, claude: AnthropicProvider, api: str, mcp: str
) -> None:
    fake.script(anthropic_message([{"type": "text", "text": "x"}], stop_reason=api))
    assert (await claude.complete(hello())).stop_reason == mcp


@pytest.mark.parametrize(
    ("status", "error_type"),
    [
        (400, "invalid_request_error"),
        (401, "authentication_error"),
        (429, "rate_limit_error"),
        (500, "api_error"),
    ],
)
async def test_anthropic_errors_say_what_the_api_said_and_never_the_key(
    fake: FakeLLM, claude: AnthropicProvider, status: int, error_type: str
) -> None:
    said = f"the API refused: key {KEY} (Authorization: Bearer {KEY})"
    fake.script(anthropic_error(status, error_type, said))
    with pytest.raises(ProviderError) as caught:
        await claude.complete(hello())

    error = caught.value
    assert (error.status, error.error_type) == (status, error_type)
    assert str(error).startswith(f"Anthropic API error {status} {error_type}: the API refused")
    assert "req_fake1" in str(error)
    assert KEY not in str(error) and KEY not in repr(error.args)
    assert error.__cause__ is None and error.__suppress_context__
    assert len(fake.requests) == 1  # max_retries=0: asked once


async def test_anthropic_retries_are_bounded_by_max_retries(fake: FakeLLM) -> None:
    fake.script(
        anthropic_error(529, "overloaded_error", "Overloaded"),
        anthropic_message([{"type": "text", "text": "late"}]),
    )
    async with AnthropicProvider(api_key=KEY, base_url=fake.url, max_retries=1) as provider:
        reply = await provider.complete(hello())
    assert reply.text == "late"
    assert len(fake.requests) == 2


@pytest.mark.parametrize(
    ("messages", "where", "why"),
    [
        (
            [
                {
                    "role": "user",
                    "content": {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"},
                }
            ],
            "messages[0].content[0]",
            "cannot take this audio block: the Messages API takes no audio",
        ),
        (
            [
                ASKED,
                {
                    "role": "assistant",
                    "content": [{"type": "image", "data": PIXEL, "mimeType": "image/png"}],
                },
            ],
            "messages[1].content[0]",
            "only the user's messages may hold images",
        ),
        (
            [
                {
                    "role": "user",
                    "content": [{"type": "image", "data": "AAAA", "mimeType": "image/bmp"}],
                }
            ],
            "messages[0].content[0]",
            "image/jpeg",
        ),
        ([{"role": "system", "content": []}], "messages[0]", "role must be"),
    ],
)
async def test_anthropic_refuses_what_it_cannot_send_before_sending(
    fake: FakeLLM, claude: AnthropicProvider, messages: list[Any], where: str, why: str
) -> None:
    with pytest.raises(ProviderError) as caught:
        await claude.complete(ModelRequest(messages))
    assert str(caught.value).startswith(where)
    assert why in str(caught.value)
    assert fake.requests == []


async def test_an_api_nobody_serves_is_a_provider_error() -> None:
    url = f"http://127.0.0.1:{unused_port()}"
    async with AnthropicProvider(api_key=KEY, base_url=url, max_retries=0) as provider:
        with pytest.raises(ProviderError, match="could not connect"):
            await provider.complete(hello())


# OpenAI Chat Completions API


async def test_openai_text_round_trip_with_system_stops_and_limits(
    fake: FakeLLM, gpt: OpenAIProvider
) -> None:
    fake.script(openai_completion("Hi there", model="gpt-x"))
    request = hello(system="Be brief.", max_tokens=77, stop_sequences=["END"], temperature=0.2)
    reply = await gpt.complete(request)

    assert reply == ModelReply(
        "gpt-x",
        [{"type": "text", "text": "Hi there"}],
        "endTurn",
        {"input_tokens": 12, "output_tokens": 7},
    )
    seen = fake.requests[0]
    assert (seen.method, seen.path) == ("POST", "/v1/chat/completions")
    assert seen.body == {
        "model": "gpt-5.5",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Hello"},  # one text block: a plain string
        ],
        "max_completion_tokens": 77,
        "stop": ["END"],
        "temperature": 0.2,
    }
    assert seen.headers["authorization"] == f"Bearer {KEY}"


async def test_openai_max_tokens_under_its_old_name_for_servers_that_want_it(
    fake: FakeLLM,
) -> None:
    fake.script(openai_completion("ok"))
    async with OpenAIProvider(
        api_key=KEY, base_url=f"{fake.url}/v1", max_retries=0, max_tokens_field="max_tokens"
    ) as provider:
        await provider.complete(hello(max_tokens=33, model="llama3"))
    body = fake.requests[0].body
    assert body["max_tokens"] == 33 and "max_completion_tokens" not in body
    assert body["model"] == "llama3"


async def test_openai_tools_go_out_as_functions_and_tool_calls_come_back(
    fake: FakeLLM, gpt: OpenAIProvider
) -> None:
    calls = [
        openai_tool_call("call_a", "add", {"a": 2, "b": 3}),
        openai_tool_call("call_b", "add", {"a": 1, "b": 1}),
    ]
    fake.script(openai_completion(None, calls, finish_reason="tool_calls"))
    reply = await gpt.complete(ModelRequest([ASKED], tools=[ADD], tool_choice={"mode": "required"}))

    assert reply.stop_reason == "toolUse"
    assert reply.content == [
        {"type": "tool_use", "id": "call_a", "name": "add", "input": {"a": 2, "b": 3}},
        {"type": "tool_use", "id": "call_b", "name": "add", "input": {"a": 1, "b": 1}},
    ]
    body = fake.requests[0].body
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "add",
                "description": "Add two numbers.",
                "parameters": ADD["inputSchema"],
            },
        }
    ]
    assert body["tool_choice"] == "required"


async def test_openai_tool_results_go_back_as_tool_messages(
    fake: FakeLLM, gpt: OpenAIProvider
) -> None:
    fake.script(openai_completion("It is 5."), openai_completion("It failed."))
    await gpt.complete(ModelRequest([ASKED, CALLED, ANSWERED], tools=[ADD]))
    await gpt.complete(ModelRequest([ASKED, CALLED, FAILED], tools=[ADD]))

    first, second = (r.body["messages"] for r in fake.requests)
    assert first[1] == {
        "role": "assistant",
        "content": "Let me add.",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "add", "arguments": '{"a": 2, "b": 3}'},
            }
        ],
    }
    assert first[2] == {"role": "tool", "tool_call_id": "call_1", "content": "5"}
    # a tool message holds text only: the result's image follows as the user's
    assert first[3] == {
        "role": "user",
        "content": [
            {"type": "text", "text": "The images of tool call call_1:"},
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PIXEL}"}},
        ],
    }
    assert len(first) == 4
    assert second[2] == {"role": "tool", "tool_call_id": "call_1", "content": "Error: overflow"}


async def test_openai_user_images_and_audio(fake: FakeLLM, gpt: OpenAIProvider) -> None:
    fake.script(openai_completion("Heard and seen."))
    content = [
        {"type": "image", "data": PIXEL, "mimeType": "image/png"},
        {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
    ]
    await gpt.complete(ModelRequest([{"role": "user", "content": content}]))
    assert fake.requests[0].body["messages"][0]["content"] == [
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PIXEL}"}},
        {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
    ]


@pytest.mark.parametrize(
    ("api", "mcp"),
    [
        ("stop", "endTurn"),
        ("length", "maxTokens"),
        ("tool_calls", "toolUse"),
        ("content_filter", "content_filter"),
    ],
)
async def test_openai_finish_reasons_in_mcp_names(
    fake: FakeLLM, gpt: OpenAIProvider, api: str, mcp: str
) -> None:
    fake.script(openai_completion("x", finish_reason=api))
    assert (await gpt.complete(hello())).stop_reason == mcp


@pytest.mark.parametrize(
    ("status", "error_type", "code"),
    [
        (400, "invalid_request_error", None),
        (401, "invalid_request_error", "invalid_api_key"),
        (429, "requests", "rate_limit_exceeded"),
        (500, "server_error", None),
    ],
)
async def test_openai_errors_say_what_the_api_said_and_never_the_key(
    fake: FakeLLM, gpt: OpenAIProvider, status: int, error_type: str, code: str | None
) -> None:
    fake.script(openai_error(status, f"Incorrect API key provided: {KEY}.", error_type, code))
    with pytest.raises(ProviderError) as caught:
        await gpt.complete(hello())

    error = caught.value
    assert (error.status, error.error_type) == (status, error_type)
    assert str(error).startswith(f"OpenAI API error {status} {error_type}: Incorrect API key")
    assert "req_fake2" in str(error)
    assert KEY not in str(error)
    assert len(fake.requests) == 1


async def test_openai_tool_calls_that_end_in_stop_are_still_tool_use(
    fake: FakeLLM, gpt: OpenAIProvider
) -> None:
    fake.script(openai_completion("", [openai_tool_call("c", "add", {"a": 1, "b": 2})], "stop"))
    reply = await gpt.complete(ModelRequest([ASKED], tools=[ADD]))
    assert reply.stop_reason == "toolUse"
    assert reply.content == [
        {"type": "tool_use", "id": "c", "name": "add", "input": {"a": 1, "b": 2}}
    ]


async def test_openai_arguments_that_are_no_json_are_a_provider_error(
    fake: FakeLLM, gpt: OpenAIProvider
) -> None:
    fake.script(openai_completion(None, [openai_tool_call("c", "add", '{"a": 2,')], "tool_calls"))
    with pytest.raises(ProviderError, match="called add with arguments that are no JSON"):
        await gpt.complete(ModelRequest([ASKED], tools=[ADD]))


@pytest.mark.parametrize(
    ("messages", "where", "why"),
    [
        (
            [
                {
                    "role": "user",
                    "content": {"type": "audio", "data": "AAAA", "mimeType": "audio/ogg"},
                }
            ],
            "messages[0].content[0]",
            "cannot take this audio/ogg block: it takes WAV and MP3 audio only",
        ),
        (
            [
                ASKED,
                {
                    "role": "assistant",
                    "content": {"type": "image", "data": PIXEL, "mimeType": "image/png"},
                },
            ],
            "messages[1].content[0]",
            "text and tool calls only",
        ),
        (
            [ASKED, CALLED, {"role": "user", "content": [{"type": "tool_result", "content": []}]}],
            "messages[2].content[0]",
            "toolUseId",
        ),
    ],
)
async def test_openai_refuses_what_it_cannot_send_before_sending(
    fake: FakeLLM, gpt: OpenAIProvider, messages: list[Any], where: str, why: str
) -> None:
    with pytest.raises(ProviderError) as caught:
        await gpt.complete(ModelRequest(messages))
    assert str(caught.value).startswith(where)
    assert why in str(caught.value)
    assert fake.requests == []


# The scripted provider


async def test_scripted_provider_replies_in_order_and_keeps_the_requests() -> None:
    call = {"type": "tool_use", "id": "t1", "name": "add", "input": {"a": 1, "b": 2}}
    provider = ScriptedProvider(
        [{"content": [call]}, "Three.", ModelReply("m", [], "maxTokens")],
        models=[ModelInfo("small")],
    )
    first = await provider.complete(hello())
    second = await provider.complete(hello(model="big"))
    third = await provider.complete(hello())

    assert (first.model, first.content, first.stop_reason) == ("small", [call], "toolUse")
    assert (second.model, second.text, second.stop_reason) == ("big", "Three.", "endTurn")
    assert third == ModelReply("m", [], "maxTokens")
    assert [r.model for r in provider.requests] == [None, "big", None]
    with pytest.raises(ProviderError, match="request 4 has no reply, the script holds 3"):
        await provider.complete(hello())


async def test_scripted_provider_asks_a_function_sync_or_async() -> None:
    def echo(request: ModelRequest) -> str:
        return f"you said {request.messages[-1]['content'][0]['text']}"

    async def count(request: ModelRequest) -> dict[str, Any]:
        return {"content": f"{len(request.messages)} messages", "stop_reason": "stopSequence"}

    assert (await ScriptedProvider(echo).complete(hello())).text == "you said Hello"
    reply = await ScriptedProvider(count).complete(hello())
    assert (reply.text, reply.stop_reason) == ("1 messages", "stopSequence")
    with pytest.raises(ProviderError, match="a reply is a ModelReply"):
        await ScriptedProvider([42]).complete(hello())  # type: ignore[list-item]


async def test_every_provider_is_a_provider(
    fake: FakeLLM, claude: AnthropicProvider, gpt: OpenAIProvider
) -> None:
    assert all(isinstance(p, Provider) for p in (claude, gpt, ScriptedProvider([])))
    assert [m.name for m in claude.models] == ["claude-sonnet-5-5"]
    async with OpenAIProvider(
        api_key=KEY, base_url=fake.url, models=["a", ModelInfo("b", cost=0.9)]
    ) as p:
        assert [(m.name, m.provider, m.cost) for m in p.models] == [
            ("a", "openai", 0.5),
            ("b", "", 0.9),
        ]


def test_importing_the_host_loads_no_sdk() -> None:
    code = (
        "import sys, mcpkit.host, mcpkit.host.providers, mcpkit.host.models; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'anthropic', 'openai', 'httpx2'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# Live: only with a real key; the local fake above covers the wire format.

LIVE_REASON = "needs a real API key; the local fake above covers the wire format"


async def smoke(provider: Provider) -> None:
    """A tool call and its result, both ways, against the real API."""
    ask = {
        "role": "user",
        "content": [{"type": "text", "text": "Use the add tool to add 2 and 3."}],
    }
    called = await provider.complete(
        ModelRequest([ask], max_tokens=1024, tools=[ADD], tool_choice={"mode": "required"})
    )
    assert called.stop_reason == "toolUse"
    use = called.tool_uses[0]
    assert (use["name"], use["input"]) == ("add", {"a": 2, "b": 3})
    result = {
        "type": "tool_result",
        "toolUseId": use["id"],
        "content": [{"type": "text", "text": "5"}],
    }
    answer = await provider.complete(
        ModelRequest(
            [
                ask,
                {"role": "assistant", "content": called.content},
                {"role": "user", "content": [result]},
            ],
            max_tokens=1024,
            tools=[ADD],
        )
    )
    assert answer.stop_reason == "endTurn"
    assert "5" in answer.text


@pytest.mark.skipif(not os.environ.get("ANTHROPIC_API_KEY"), reason=LIVE_REASON)
async def test_live_anthropic() -> None:
    model = os.environ.get("MCPKIT_LIVE_ANTHROPIC_MODEL", "claude-haiku-4-5")
    async with AnthropicProvider(default_model=model) as provider:
        await smoke(provider)


@pytest.mark.skipif(not os.environ.get("OPENAI_API_KEY"), reason=LIVE_REASON)
async def test_live_openai() -> None:
    model = os.environ.get("MCPKIT_LIVE_OPENAI_MODEL", "gpt-5.4-mini")
    async with OpenAIProvider(default_model=model) as provider:
        await smoke(provider)
