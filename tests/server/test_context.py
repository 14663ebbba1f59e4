"""Context, logging, list_changed, pagination and lifespan, seen from a connected client."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field

from mcpkit import Server
from mcpkit.errors import ProtocolError
from mcpkit.protocol import RequestReceived
from mcpkit.runtime import Session
from mcpkit.server.context import Context
from mcpkit.server.elicitation import requested_schema

from .peer import connect


def text(result: dict[str, Any]) -> str:
    return str(result["content"][0]["text"])


async def test_context_knows_the_request_and_the_client() -> None:
    server = Server("facts")

    @server.tool()
    def whoami(ctx: Context) -> str:
        return f"{ctx.client_info['name']} {ctx.protocol_version} {type(ctx.request_id).__name__}"

    async with connect(server) as peer:
        assert text(await peer.call("whoami")) == "tester 2025-11-25 int"


async def test_progress_reaches_the_caller() -> None:
    server = Server("progress")

    @server.tool()
    async def work(steps: int, ctx: Context) -> str:
        for step in range(1, steps + 1):
            await ctx.report_progress(step, steps, f"step {step}")
        return "done"

    async with connect(server) as peer:
        seen: list[tuple[float, float | None, str | None]] = []
        result = await peer.session.request(
            "tools/call",
            {"name": "work", "arguments": {"steps": 3}},
            on_progress=lambda p, t, m: seen.append((p, t, m)),
        )
        assert text(result) == "done"
        assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


async def test_log_messages_follow_the_level_the_client_set() -> None:
    server = Server("logs")

    @server.tool()
    async def chatty(ctx: Context) -> str:
        sent = [await ctx.debug("d"), await ctx.warning("w"), await ctx.error({"e": 1})]
        return ",".join(str(s) for s in sent)

    async with connect(server) as peer:
        assert text(await peer.call("chatty")) == "False,False,False"  # nobody asked yet
        assert await peer.session.request("logging/setLevel", {"level": "warning"}) == {}
        assert text(await peer.call("chatty")) == "False,True,True"
        assert await peer.next_notification("notifications/message") == {
            "level": "warning",
            "data": "w",
        }
        assert await peer.next_notification("notifications/message") == {
            "level": "error",
            "data": {"e": 1},
        }
        with pytest.raises(ProtocolError) as bad:
            await peer.session.request("logging/setLevel", {"level": "loud"})
        assert bad.value.code == -32602


async def test_python_logging_of_the_server_logger_is_forwarded() -> None:
    server = Server("pylog")

    @server.tool()
    def noisy() -> str:
        server.logger.info("info record")
        server.logger.error("error record %d", 7)
        return "ok"

    async with connect(server) as quiet, connect(server) as listener:
        await listener.session.request("logging/setLevel", {"level": "error"})
        await quiet.call("noisy")
        message = await listener.next_notification("notifications/message")
        assert message == {
            "level": "error",
            "logger": "mcpkit.server.pylog",
            "data": "error record 7",
        }
        assert quiet.notifications == []
    assert logging.getLogger("mcpkit.server.pylog").handlers == []  # removed when serving ends


async def test_sampling_elicitation_and_roots_go_to_the_client() -> None:
    server = Server("asks")

    @server.tool()
    async def ask(ctx: Context) -> str:
        sampled = await ctx.sample("What is 2+2?", max_tokens=10)
        answer = await ctx.elicit(
            "Your name?", {"type": "object", "properties": {"n": {"type": "string"}}}
        )
        roots = await ctx.list_roots()
        return f"{sampled.content.text} {answer.data['n']} {roots[0].uri}"

    asked: list[str] = []

    def answer(session: Session, request: RequestReceived) -> dict[str, Any]:
        asked.append(request.method)
        params = request.params or {}
        if request.method == "sampling/createMessage":
            assert params["maxTokens"] == 10
            return {"role": "assistant", "content": {"type": "text", "text": "4"}, "model": "m"}
        if request.method == "elicitation/create":
            assert params["mode"] == "form" and params["message"] == "Your name?"
            return {"action": "accept", "content": {"n": "Ada"}}
        return {"roots": [{"uri": "file:///work", "name": "work"}]}

    capabilities = {"sampling": {}, "elicitation": {"form": {}}, "roots": {"listChanged": True}}
    async with connect(server, capabilities, answer) as peer:
        assert text(await peer.call("ask")) == "4 Ada file:///work"
    assert asked == ["sampling/createMessage", "elicitation/create", "roots/list"]


async def test_asking_what_the_client_did_not_declare_is_a_clear_tool_error() -> None:
    server = Server("refused")

    @server.tool()
    async def ask(ctx: Context) -> str:
        await ctx.sample("hi")
        return "unreachable"

    async with connect(server) as peer:
        result = await peer.call("ask")
        assert result["isError"] is True
        assert "sampling" in text(result) and "did not declare" in text(result)


async def test_a_prompt_or_resource_asking_what_the_client_did_not_declare_says_why() -> None:
    server = Server("refused")

    @server.prompt()
    async def ask_prompt(ctx: Context) -> str:
        await ctx.sample("hi")
        return "unreachable"

    @server.resource("memo://asks")
    async def ask_resource(ctx: Context) -> str:
        await ctx.list_roots()
        return "unreachable"

    async with connect(server) as peer:
        for method, params, missing in (
            ("prompts/get", {"name": "ask_prompt"}, "'sampling'"),
            ("resources/read", {"uri": "memo://asks"}, "'roots'"),
        ):
            with pytest.raises(ProtocolError) as refused:
                await peer.request(method, params)
            assert refused.value.code == -32603
            assert "did not declare" in refused.value.message and missing in refused.value.message


async def test_url_elicitation_needs_the_url_capability() -> None:
    server = Server("url")

    @server.tool()
    async def go(ctx: Context) -> str:
        reply = await ctx.elicit_url("Sign in", "https://example.com/x", "e-1")
        return reply.action  # URL mode returns the ElicitResult

    async with connect(server, {"elicitation": {"form": {}}}) as peer:
        assert "url" in text(await peer.call("go"))

    def accept(session: Session, request: RequestReceived) -> dict[str, Any]:
        assert (request.params or {})["mode"] == "url"
        return {"action": "accept"}

    async with connect(server, {"elicitation": {"url": {}}}, accept) as peer:
        assert text(await peer.call("go")) == "accept"


async def test_finer_capabilities_are_checked_before_anything_is_sent_at_2025_11_25() -> None:
    """Elicitation modes and sampling.tools / sampling.context exist from 2025-11-25: a
    client that did not declare them gets nothing (a tool error naming the capability); an
    older client, whose revision has no such capabilities, is asked as before."""
    server = Server("finer")

    @server.tool()
    async def both(ctx: Context) -> str:
        # Gathered: the second ask's missing capability stops the first from leaving too.
        await ctx.gather_input(
            ctx.roots_request(), ctx.sample_request("hi", tools=[{"name": "t", "inputSchema": {}}])
        )
        return "unreachable"

    @server.tool()
    async def form(ctx: Context) -> str:
        await ctx.elicit("Name?", {"type": "object", "properties": {"n": {"type": "string"}}})
        return "unreachable"

    @server.tool()
    async def context(ctx: Context) -> str:
        sampled = await ctx.sample("hi", include_context="thisServer")
        return str(sampled.content.text)

    asked: list[str] = []

    def answer(session: Session, request: RequestReceived) -> dict[str, Any]:
        asked.append(request.method)
        if request.method == "roots/list":
            return {"roots": []}
        return {"role": "assistant", "content": {"type": "text", "text": "ok"}, "model": "m"}

    capabilities = {"sampling": {}, "elicitation": {"url": {}}, "roots": {}}
    async with connect(server, capabilities, answer, version="2025-11-25") as peer:
        for tool, missing in (("both", "sampling.tools"), ("form", "elicitation.form")):
            result = await peer.call(tool)
            assert result["isError"] is True and missing in text(result), tool
        result = await peer.call("context")
        assert result["isError"] is True and "sampling.context" in text(result)
    assert asked == []
    async with connect(server, {"sampling": {}}, answer, version="2025-06-18") as peer:
        assert text(await peer.call("context")) == "ok"
    assert asked == ["sampling/createMessage"]


async def test_tools_added_at_run_time_are_announced() -> None:
    server = Server("dynamic")

    @server.tool()
    def first() -> str:
        return "1"

    async with connect(server) as peer:
        server.add_tool(lambda: "2", name="second")
        assert await peer.next_notification("notifications/tools/list_changed") is None
        listed = await peer.session.request("tools/list")
        assert [t["name"] for t in listed["tools"]] == ["first", "second"]
        server.remove_tool("first")
        await peer.next_notification("notifications/tools/list_changed")
        assert text(await peer.call("second")) == "2"


async def test_pages_follow_cursors_in_a_stable_order_and_forged_cursors_fail() -> None:
    server = Server("paged", page_size=2)
    for index in range(5):
        server.add_tool(lambda: "x", name=f"t{index}")

    async with connect(server) as peer:
        names: list[str] = []
        cursor = None
        pages = 0
        while True:
            params = {} if cursor is None else {"cursor": cursor}
            page = await peer.session.request("tools/list", params)
            names += [tool["name"] for tool in page["tools"]]
            pages += 1
            cursor = page.get("nextCursor")
            if cursor is None:
                break
        assert names == [f"t{i}" for i in range(5)] and pages == 3
        for forged in ("AAAAAAAAAAI", "not a cursor!", 12, cursor or "x" * 80):
            with pytest.raises(ProtocolError) as bad:
                await peer.session.request("tools/list", {"cursor": forged})
            assert bad.value.code == -32602


async def test_lifespan_is_entered_once_around_every_connection() -> None:
    events: list[str] = []

    @contextlib.asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[dict[str, str]]:
        events.append("start")
        yield {"db": "connected"}
        events.append("stop")

    server = Server("life", lifespan=lifespan)

    @server.tool()
    def db(ctx: Context) -> str:
        return str(ctx.lifespan["db"])

    async with connect(server) as one, connect(server) as two:
        assert text(await one.call("db")) == "connected"
        assert text(await two.call("db")) == "connected"
        assert events == ["start"]
    assert events == ["start", "stop"]
    assert server.lifespan_state is None


class Booking(BaseModel):
    guests: int
    vegetarian: bool = False


@dataclass
class Inner:
    x: int


@dataclass
class Outer:
    inner: Inner


async def test_typed_elicitation_returns_an_instance_and_refuses_bad_answers() -> None:
    server = Server("typed")
    schemas: list[Any] = []

    @server.tool()
    async def book(ctx: Context) -> str:
        answer = await ctx.elicit("How many?", Booking)
        if answer.action != "accept":
            return answer.action
        assert isinstance(answer.data, Booking)
        return f"{answer.data.guests} {answer.data.vegetarian}"

    replies = iter(
        [
            {"action": "accept", "content": {"guests": 3, "vegetarian": True}},
            {"action": "decline"},
            {"action": "accept", "content": {"guests": "many"}},
        ]
    )

    def answer(session: Session, request: RequestReceived) -> dict[str, Any]:
        schemas.append((request.params or {})["requestedSchema"])
        return next(replies)

    async with connect(server, {"elicitation": {}}, answer) as peer:
        assert text(await peer.call("book")) == "3 True"
        assert text(await peer.call("book")) == "decline"
        bad = await peer.call("book")
        assert bad["isError"] is True and "guests" in text(bad)
    assert schemas[0] == {
        "type": "object",
        "properties": {
            "guests": {"type": "integer"},
            "vegetarian": {"type": "boolean", "default": False},
        },
        "required": ["guests"],
    }


class Toppings(BaseModel):
    chosen: list[Literal["cheese", "olives"]]


def test_multi_select_enum_fields_are_allowed() -> None:
    schema = requested_schema(Toppings)
    assert schema["properties"]["chosen"] == {
        "type": "array",
        "items": {"enum": ["cheese", "olives"], "type": "string"},
    }


def test_nested_elicitation_schemas_are_refused() -> None:
    with pytest.raises(ValueError, match="flat"):
        requested_schema(Outer)


async def test_close_sse_stream_is_false_where_the_transport_has_no_streams() -> None:
    server = Server("streams")

    @server.tool()
    def close(ctx: Context) -> bool:
        return ctx.close_sse_stream()

    async with connect(server) as peer:
        assert text(await peer.call("close")) == "false"


class Labelled(BaseModel):
    city: str = Field(title="Destination", description="Where to")
    return_date: str


def test_form_titles_the_author_wrote_are_kept() -> None:
    """A form shows a field's title as its label: the author's are sent, pydantic's made-up
    ones ("Return Date" from return_date) are not, and a dict schema is sent as written
    (and left unchanged)."""
    schema = requested_schema(Labelled)
    assert "title" not in schema
    assert schema["properties"]["city"] == {
        "type": "string",
        "title": "Destination",
        "description": "Where to",
    }
    assert schema["properties"]["return_date"] == {"type": "string"}
    given = {"type": "object", "properties": {"n": {"type": "integer", "title": "How many"}}}
    assert requested_schema(given) == given
    assert given["properties"]["n"]["title"] == "How many"
