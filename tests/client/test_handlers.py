"""Sampling, elicitation and roots: the server asks, the client's handlers answer.

The scripted server sends the requests itself, so each test sees the exact answer (or error
code) that reaches the server. One test goes through mcpkit's own `Server` and `Context`.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from mcpkit import Client, Server
from mcpkit.client import Elicitation, Sampling, form_errors
from mcpkit.errors import CapabilityNotDeclared, ProtocolError
from mcpkit.server.context import Context
from mcpkit.types import (
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    ElicitResult,
    Root,
)

from .scripted import ScriptedServer

JSONObject = dict[str, Any]
Ask = Callable[[str, JSONObject | None], Awaitable[JSONObject]]

HELLO = {"role": "user", "content": {"type": "text", "text": "hello"}}
REPLY = {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "test-model"}
FORM = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 2},
        "email": {"type": "string", "format": "email"},
        "age": {"type": "integer", "minimum": 0},
        "height": {"type": "number"},
        "color": {"type": "string", "oneOf": [{"const": "r", "title": "Red"}, {"const": "g"}]},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "maxItems": 2},
        "ok": {"type": "boolean"},
    },
    "required": ["name"],
}


@asynccontextmanager
async def asking(**options: Any) -> AsyncIterator[tuple[Ask, Client, ScriptedServer]]:
    """A client with `options`, and a function the server uses to ask it something."""
    scripted = ScriptedServer({})
    async with Client(scripted.client_end, **options) as client:
        await scripted.ready()

        async def ask(method: str, params: JSONObject | None) -> JSONObject:
            return await scripted.session.request(method, params)

        yield ask, client, scripted
    await scripted.stop()


async def error_code(pending: Awaitable[Any]) -> tuple[int, str]:
    with pytest.raises(ProtocolError) as raised:
        await pending
    return raised.value.code, raised.value.message


# -- sampling -----------------------------------------------------------------------------------


async def test_sampling_handler_gets_typed_params_and_its_result_is_sent() -> None:
    seen: list[CreateMessageRequestParams] = []

    async def sample(params: CreateMessageRequestParams) -> CreateMessageResult:
        seen.append(params)
        return CreateMessageResult.from_wire(REPLY)

    async with asking(sampling=Sampling(sample, tools=True)) as (ask, _, _):
        params = {
            "messages": [HELLO],
            "maxTokens": 50,
            "systemPrompt": "be brief",
            "temperature": 0.5,
            "modelPreferences": {
                "hints": [{"name": "claude-3-sonnet"}],
                "costPriority": 0.3,
                "speedPriority": 0.8,
            },
            "tools": [{"name": "get_weather", "inputSchema": {"type": "object"}}],
            "toolChoice": {"mode": "required"},
        }
        assert await ask("sampling/createMessage", params) == REPLY
    (typed,) = seen
    assert typed.max_tokens == 50 and typed.system_prompt == "be brief"
    assert typed.messages[0].content.text == "hello"  # type: ignore[union-attr]
    preferences = typed.model_preferences_
    assert preferences is not None and preferences.speed_priority == 0.8
    assert [hint.name for hint in preferences.hints or []] == ["claude-3-sonnet"]
    assert [tool.name for tool in typed.tools or []] == ["get_weather"]
    assert typed.tool_choice is not None and typed.tool_choice.mode == "required"


async def test_tool_use_in_sampling_follows_the_spec() -> None:
    tool_use = {"type": "tool_use", "id": "u1", "name": "get_weather", "input": {}}
    tool_result = {"type": "tool_result", "toolUseId": "u1", "content": []}
    text = {"type": "text", "text": "x"}
    calls: list[Any] = []

    def sample(params: CreateMessageRequestParams) -> JSONObject:  # a plain function works too
        calls.append(params)
        return {**REPLY, "content": [tool_use], "stopReason": "toolUse"}

    async with asking(sampling=sample) as (ask, _, _):
        tools = {"messages": [HELLO], "maxTokens": 5, "tools": [{"name": "t", "inputSchema": {}}]}
        code, message = await error_code(ask("sampling/createMessage", tools))
        assert code == -32602 and "did not declare sampling.tools" in message

    async with asking(sampling=Sampling(sample, tools=True)) as (ask, _, _):
        conversation = [
            HELLO,
            {"role": "assistant", "content": [tool_use]},
            {"role": "user", "content": [tool_result]},
        ]
        answer = await ask("sampling/createMessage", {"messages": conversation, "maxTokens": 5})
        assert answer["stopReason"] == "toolUse"

        mixed = [*conversation[:2], {"role": "user", "content": [tool_result, text]}]
        code, message = await error_code(
            ask("sampling/createMessage", {"messages": mixed, "maxTokens": 5})
        )
        assert (code, message) == (
            -32602,
            "Invalid params: tool results mixed with other content in one message",
        )
        missing = [*conversation[:2], {"role": "user", "content": [text]}]
        code, message = await error_code(
            ask("sampling/createMessage", {"messages": missing, "maxTokens": 5})
        )
        assert (code, message) == (-32602, "Invalid params: tool result missing in request")
    assert len(calls) == 1


async def test_sampling_errors_the_server_can_act_on(caplog: pytest.LogCaptureFixture) -> None:
    def refuse(params: CreateMessageRequestParams) -> JSONObject:
        raise ProtocolError(-1, "User rejected sampling request")

    async with asking(sampling=refuse) as (ask, _, _):
        good = {"messages": [HELLO], "maxTokens": 5}
        assert await error_code(ask("sampling/createMessage", good)) == (
            -1,
            "User rejected sampling request",
        )
        code, message = await error_code(ask("sampling/createMessage", {"messages": "nope"}))
        assert code == -32602 and message.startswith("Invalid params for sampling/createMessage:")

    async with asking(sampling=lambda params: {"content": "not a block"}) as (ask, _, _):
        with caplog.at_level(logging.WARNING, logger="mcpkit.client"):
            code, message = await error_code(ask("sampling/createMessage", good))
        assert (code, message) == (
            -32603,
            "Internal error: the client's sampling answer was invalid",
        )
        assert "the sampling handler's answer was not sent" in caplog.text

    async with asking() as (ask, _, _):  # not declared: the server may not even ask
        with pytest.raises(CapabilityNotDeclared, match="did not declare the 'sampling'"):
            await ask("sampling/createMessage", good)


# -- elicitation --------------------------------------------------------------------------------


async def test_form_answers_are_checked_against_the_requested_schema(
    caplog: pytest.LogCaptureFixture,
) -> None:
    answers: list[JSONObject] = []
    seen: list[Any] = []

    async def elicit(params: ElicitRequestFormParams | ElicitRequestURLParams) -> JSONObject:
        seen.append(params)
        return answers.pop(0)

    good = {
        "name": "Ada",
        "email": "ada@example.com",
        "age": 36,
        "height": 1.68,
        "color": "r",
        "tags": ["a", "b"],
        "ok": True,
    }
    async with asking(elicitation=elicit) as (ask, _, _):
        request = {"mode": "form", "message": "Who are you?", "requestedSchema": FORM}
        answers.append({"action": "accept", "content": good})
        assert await ask("elicitation/create", request) == {"action": "accept", "content": good}
        assert isinstance(seen[0], ElicitRequestFormParams)
        assert seen[0].message == "Who are you?"

        legacy = {"message": "No mode means form", "requestedSchema": FORM}
        answers.append({"action": "decline"})
        assert await ask("elicitation/create", legacy) == {"action": "decline"}
        answers.append({"action": "cancel"})
        assert await ask("elicitation/create", legacy) == {"action": "cancel"}

        for bad in (
            {"email": "ada@example.com"},  # name is required
            {"name": "Ada", "email": "not-an-email"},
            {"name": "Ada", "age": 3.5},
            {"name": "Ada", "color": "blue"},
            {"name": "Ada", "tags": ["a", "b", "a"]},
            {"name": "Ada", "password": "hunter2"},  # not in the form
        ):
            answers.append({"action": "accept", "content": bad})
            with caplog.at_level(logging.WARNING, logger="mcpkit.client"):
                assert await error_code(ask("elicitation/create", request)) == (
                    -32603,
                    "Internal error: the client's elicitation answer was invalid",
                )
        # The server learns only that the answer was invalid; the log names the problem.
        assert "unexpected property 'password'" in caplog.records[-1].getMessage()
        answers.append({"action": "maybe"})
        assert (await error_code(ask("elicitation/create", request)))[0] == -32603


async def test_url_mode_is_answered_only_when_declared() -> None:
    seen: list[Any] = []

    def elicit(params: Any) -> ElicitResult:
        seen.append(params)
        return ElicitResult(action="accept")

    url = {
        "mode": "url",
        "message": "Connect your account",
        "url": "https://example.com/connect",
        "elicitationId": "e-1",
    }
    async with asking(elicitation=elicit) as (ask, _, _):
        assert await error_code(ask("elicitation/create", url)) == (
            -32602,
            "Invalid params: this client did not declare url-mode elicitation",
        )
    async with asking(elicitation=Elicitation(elicit, form=False, url=True)) as (ask, _, _):
        assert await ask("elicitation/create", url) == {"action": "accept"}
        (typed,) = seen
        assert isinstance(typed, ElicitRequestURLParams)
        assert (typed.url, typed.elicitation_id) == ("https://example.com/connect", "e-1")
        form = {"message": "m", "requestedSchema": FORM}
        assert (await error_code(ask("elicitation/create", form)))[0] == -32602
    with pytest.raises(ValueError, match="at least one mode"):
        Elicitation(elicit, form=False)


def test_form_errors_for_user_interfaces() -> None:
    assert form_errors(FORM, {"name": "Ada"}) == []
    assert form_errors(FORM, {"name": "A", "age": -1}) == [
        "$.name: needs at least 2 characters, has 1",
        "$.age: must be at least 0, got -1",
    ]
    assert form_errors(FORM, ["Ada"]) == ["form content must be an object, got list"]


# -- roots --------------------------------------------------------------------------------------


async def test_roots_are_listed_and_changes_announced(tmp_path: Path) -> None:
    given: list[Any] = [
        tmp_path,
        "file:///srv/data",
        {"uri": "file:///srv/logs", "name": "logs"},
        Root(uri="file:///home", name="home"),
    ]
    async with asking(roots=given) as (ask, client, scripted):
        assert await ask("roots/list", None) == {
            "roots": [
                {"uri": tmp_path.as_uri(), "name": tmp_path.name},
                {"uri": "file:///srv/data"},
                {"uri": "file:///srv/logs", "name": "logs"},
                {"uri": "file:///home", "name": "home"},
            ]
        }
        await client.set_roots(["file:///only"])
        await scripted.wait_for(lambda: bool(scripted.notifications))
        assert scripted.notifications == [("notifications/roots/list_changed", None)]
        assert await ask("roots/list", None) == {"roots": [{"uri": "file:///only"}]}

        current = ["file:///a"]

        async def source() -> list[str]:
            return current

        await client.set_roots(source)
        current = ["file:///b"]
        assert await ask("roots/list", None) == {"roots": [{"uri": "file:///b"}]}
        await client.set_roots(lambda: [42])
        assert (await error_code(ask("roots/list", None)))[0] == -32603
        with pytest.raises(TypeError, match="wrap a single root in a list"):
            await client.set_roots("file:///x")


async def test_roots_without_the_capability() -> None:
    async with asking() as (ask, client, _):
        with pytest.raises(CapabilityNotDeclared, match="client did not declare the 'roots'"):
            await ask("roots/list", None)
        with pytest.raises(CapabilityNotDeclared, match="did not declare the 'roots' capability"):
            await client.set_roots(["file:///x"])
    client = Client(Server("later"))
    await client.set_roots(["file:///before-connecting"])  # sets what will be offered
    async with client:
        assert client.protocol_version


# -- through mcpkit's own server ----------------------------------------------------------------


async def test_the_mcpkit_server_context_reaches_every_handler(tmp_path: Path) -> None:
    server = Server("asker")

    @server.tool()
    async def ask_all(ctx: Context) -> str:
        sampled = await ctx.sample("hello", max_tokens=5)
        form = {"type": "object", "properties": {"name": {"type": "string"}}}
        answer = await ctx.elicit("Your name?", form)
        roots = await ctx.list_roots()
        return f"{sampled.model} {answer.data} {[r.uri for r in roots]}"

    async def elicit(params: Any) -> JSONObject:
        return {"action": "accept", "content": {"name": "Ada"}}

    async with Client(
        server,
        sampling=lambda params: REPLY,
        elicitation=elicit,
        roots=[tmp_path],
    ) as client:
        result = await client.call_tool("ask_all", raise_on_error=True)
        assert result.content[0].text == f"test-model {{'name': 'Ada'}} ['{tmp_path.as_uri()}']"  # type: ignore[union-attr]


async def test_accepted_form_gets_the_schema_defaults_the_user_left_as_they_were() -> None:
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "default": "Ada"},
            "count": {"type": "integer", "default": 3},
            "notify": {"type": "boolean", "default": True},
            "note": {"type": "string"},
        },
    }

    async def accept_partly(params: ElicitRequestFormParams) -> JSONObject:
        return {"action": "accept", "content": {"name": "Grace"}}

    async with asking(elicitation=accept_partly) as (ask, _, _):
        params = {"mode": "form", "message": "Details?", "requestedSchema": schema}
        answer = await ask("elicitation/create", params)
    assert answer == {"action": "accept", "content": {"name": "Grace", "count": 3, "notify": True}}
