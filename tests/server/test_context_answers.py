"""`ctx.sample` takes Python keywords and, like `ctx.list_roots` and `ctx.elicit_url`, returns
the typed models the client side uses (issue 23, "Context.sample ... one style"); the wire
spellings and dict reads of before keep working for one release, with a warning."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mcpkit import Server
from mcpkit.errors import InvalidResult
from mcpkit.protocol import RequestReceived
from mcpkit.runtime import Session
from mcpkit.server.context import Context
from mcpkit.types import CreateMessageResult, ElicitResult, ModelPreferences, Root, TextContent
from tests.typecheck import mypy_strict

from .peer import connect

EVERYTHING = {
    "sampling": {"tools": {}, "context": {}},
    "elicitation": {"form": {}, "url": {}},
    "roots": {},
}
SAMPLED = {"role": "assistant", "content": {"type": "text", "text": "4"}, "model": "m"}


def text(result: dict[str, Any]) -> str:
    return str(result["content"][0]["text"])


class Answers:
    """The client side: records what each request carried, answers from `replies`."""

    def __init__(self, **replies: dict[str, Any]) -> None:
        self.replies = {
            "sampling/createMessage": SAMPLED,
            "roots/list": {"roots": [{"uri": "file:///work", "name": "work"}]},
            "elicitation/create": {"action": "accept"},
        }
        self.replies.update({k.replace("_", "/"): v for k, v in replies.items()})
        self.params: dict[str, Any] = {}

    def __call__(self, session: Session, request: RequestReceived) -> dict[str, Any]:
        self.params[request.method] = request.params
        return self.replies[request.method]


async def test_answers_are_the_client_sides_models() -> None:
    server = Server("asks")
    seen: dict[str, Any] = {}

    @server.tool()
    async def ask(ctx: Context) -> str:
        seen["sampled"] = await ctx.sample("What is 2+2?")
        seen["roots"] = await ctx.list_roots()
        seen["url"] = await ctx.elicit_url("Sign in", "https://example.com/x", "e-1")
        return "ok"

    async with connect(server, EVERYTHING, Answers()) as peer:
        assert text(await peer.call("ask")) == "ok"
    sampled, roots, url = seen["sampled"], seen["roots"], seen["url"]
    assert isinstance(sampled, CreateMessageResult)
    assert isinstance(sampled.content, TextContent) and sampled.content.text == "4"
    assert sampled.model == "m" and sampled.stop_reason is None
    assert all(isinstance(root, Root) for root in roots)
    assert [(root.uri, root.name) for root in roots] == [("file:///work", "work")]
    assert isinstance(url, ElicitResult) and url.action == "accept"


async def test_sample_takes_python_keywords_and_sends_the_wire_params() -> None:
    server = Server("asks")

    @server.tool()
    async def ask(ctx: Context) -> str:
        await ctx.sample(
            [{"role": "user", "content": {"type": "text", "text": "hi"}}],
            max_tokens=10,
            system_prompt="terse",
            temperature=0.5,
            stop_sequences=["\n"],
            model_preferences=ModelPreferences(intelligence_priority=0.9),
            include_context="thisServer",
            metadata={"trace": 1},
            tools=[{"name": "t", "inputSchema": {"type": "object"}}],
            tool_choice={"mode": "auto"},
            meta={"note": "x"},
        )
        return "ok"

    answers = Answers()
    async with connect(server, EVERYTHING, answers) as peer:
        assert text(await peer.call("ask")) == "ok"
    assert answers.params["sampling/createMessage"] == {
        "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
        "maxTokens": 10,
        "systemPrompt": "terse",
        "temperature": 0.5,
        "stopSequences": ["\n"],
        "modelPreferences": {"intelligencePriority": 0.9},
        "includeContext": "thisServer",
        "metadata": {"trace": 1},
        "tools": [{"name": "t", "inputSchema": {"type": "object"}}],
        "toolChoice": {"mode": "auto"},
        "_meta": {"note": "x"},
    }


async def test_a_malformed_answer_is_an_invalid_result() -> None:
    server = Server("asks")
    raised: list[BaseException] = []

    @server.tool()
    async def ask(ctx: Context) -> str:
        try:
            await ctx.sample("hi")
        except InvalidResult as exc:
            raised.append(exc)
            raise
        return "unreachable"

    answers = Answers(sampling_createMessage={"role": "assistant", "content": SAMPLED["content"]})
    async with connect(server, EVERYTHING, answers) as peer:
        result = await peer.call("ask")
    assert result["isError"] is True
    assert "sampling/createMessage is malformed" in text(result)
    assert "model: Field required" in str(raised[0])


async def test_an_unknown_keyword_is_refused() -> None:
    server = Server("asks")

    @server.tool()
    async def ask(ctx: Context) -> str:
        await ctx.sample("hi", temprature=0.5)  # type: ignore[call-arg]
        return "unreachable"

    async with connect(server, EVERYTHING, Answers()) as peer:
        result = await peer.call("ask")
    assert result["isError"] is True and "unexpected keyword 'temprature'" in text(result)


# -- the old spellings, for one release --------------------------------------------------------


async def test_wire_spelled_options_still_work_and_warn() -> None:
    server = Server("asks")

    @server.tool()
    async def ask(ctx: Context) -> str:
        with pytest.warns(DeprecationWarning, match=r"use ctx\.sample\(include_context=") as w:
            await ctx.sample("hi", includeContext="thisServer")  # type: ignore[call-arg]
        assert w[0].filename == __file__  # the warning points at the handler's line
        with pytest.warns(DeprecationWarning, match=r"use ctx\.sample\(model_preferences=") as w:
            ctx.sample_request("hi", modelPreferences={"hints": []})  # type: ignore[call-arg]
        assert w[0].filename == __file__
        return "ok"

    answers = Answers()
    async with connect(server, EVERYTHING, answers) as peer:
        assert text(await peer.call("ask")) == "ok"
    assert answers.params["sampling/createMessage"]["includeContext"] == "thisServer"


async def test_dict_reads_of_answers_still_work_and_warn() -> None:
    server = Server("asks")

    @server.tool()
    async def ask(ctx: Context) -> str:
        sampled = await ctx.sample("hi")
        roots = await ctx.list_roots()
        url = await ctx.elicit_url("Sign in", "https://example.com/x", "e-1")
        with pytest.warns(DeprecationWarning, match=r"read its attribute"):
            said = sampled["content"]["text"]  # type: ignore[index]
        with pytest.warns(DeprecationWarning):
            where = roots[0]["uri"]  # type: ignore[index]
        with pytest.warns(DeprecationWarning):
            action = url.get("action")  # type: ignore[attr-defined]
        with pytest.warns(DeprecationWarning):
            assert "model" in sampled  # type: ignore[operator]
        return f"{said} {where} {action}"

    async with connect(server, EVERYTHING, Answers()) as peer:
        assert text(await peer.call("ask")) == "4 file:///work accept"


TYPED = """
from mcpkit.server import Context


async def handler(ctx: Context) -> str:
    sampled = await ctx.sample("hi", max_tokens=5, system_prompt="terse")
    roots = await ctx.list_roots()
    ctx.sample_request("hi", temperature=0.2)
    await ctx.sample("hi", maxTokens=5)  # E
    await ctx.sample("hi", temperature="hot")  # E
    ctx.sample_request("hi", systemPrompt="x")  # E
    return sampled.model + roots[0].uri + str(sampled.stop_reason)
"""


def test_mypy_knows_the_keywords_and_the_models(tmp_path: Path) -> None:
    checked = mypy_strict(TYPED, tmp_path)
    wanted = {i for i, line in enumerate(TYPED.splitlines(), 1) if "# E" in line}
    assert checked.error_lines == wanted, checked.stdout
