"""Prompts seen from a connected client: prompts/list, prompts/get, typed arguments, messages,
errors, pagination and list_changed."""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
from collections.abc import AsyncIterator
from typing import Annotated, Any, Literal

import pytest

from mcpkit import Client, Server
from mcpkit.errors import INTERNAL_ERROR, INVALID_PARAMS, InvalidParams, ProtocolError
from mcpkit.protocol import Connection, ConnectionConfig, NotificationReceived
from mcpkit.runtime import Session
from mcpkit.server.context import Context
from mcpkit.server.prompts import AssistantMessage, UserMessage
from mcpkit.transports.memory import memory_pair
from mcpkit.types import EmbeddedResource, ImageContent, TextResourceContents


class Level(enum.Enum):
    LOW = "low"
    HIGH = "high"


class Picture:
    """Stands in for the content helpers (Image, Audio, File): anything with to_content()."""

    def to_content(self) -> dict[str, Any]:
        return IMAGE


class Description:
    """Stands in for pydantic's FieldInfo: anything with .title / .description."""

    def __init__(self, title: str, description: str) -> None:
        self.title = title
        self.description = description


async def get(client: Client, name: str, **arguments: str) -> dict[str, Any]:
    return await client.request("prompts/get", {"name": name, "arguments": arguments})


async def refused(client: Client, name: str, arguments: Any) -> ProtocolError:
    with pytest.raises(ProtocolError) as caught:
        await client.request("prompts/get", {"name": name, "arguments": arguments})
    return caught.value


def texts(result: dict[str, Any]) -> list[tuple[str, str]]:
    return [(m["role"], m["content"]["text"]) for m in result["messages"]]


# -- prompts/list ------------------------------------------------------------------------------


async def test_list_describes_prompts_from_their_signatures_and_docstrings() -> None:
    server = Server("prompts")

    @server.prompt()
    def review(code: str, language: str = "python") -> str:
        """Review a piece of code.

        Looks for bugs and style problems.

        Args:
            code: The code to review,
                as plain text.
            language: Its programming language.

        Returns:
            The request for the model.
        """
        return code

    @server.prompt(
        "greet",
        title="Greeting",
        description="Say hello.",
        icons=[{"src": "https://example.com/hi.png", "mimeType": "image/png"}],
        meta={"example.com/tag": 1},
    )
    def greeting(
        name: Annotated[str, Description("Name", "Who to greet")],
        mood: Annotated[str, "How cheerful"] = "glad",
        ctx: Context | None = None,
    ) -> str:
        return f"Hello {name}"

    @server.prompt()
    def plain() -> str:
        return "no arguments"

    @server.prompt()
    def sphinx(topic: str) -> str:
        """Explain a topic.

        :param topic: What to explain.
        :returns: the prompt
        """
        return topic

    async with Client(server) as client:
        assert client.server_capabilities["prompts"] == {"listChanged": True}
        listed = await client.request("prompts/list")

    assert "nextCursor" not in listed
    assert listed["prompts"] == [
        {
            "name": "review",
            "description": "Review a piece of code.",
            "arguments": [
                {
                    "name": "code",
                    "description": "The code to review, as plain text.",
                    "required": True,
                },
                {"name": "language", "description": "Its programming language.", "required": False},
            ],
        },
        {
            "name": "greet",
            "title": "Greeting",
            "description": "Say hello.",
            "arguments": [  # ctx is injected, not an argument
                {"name": "name", "title": "Name", "description": "Who to greet", "required": True},
                {"name": "mood", "description": "How cheerful", "required": False},
            ],
            "icons": [{"src": "https://example.com/hi.png", "mimeType": "image/png"}],
            "_meta": {"example.com/tag": 1},
        },
        {"name": "plain", "arguments": []},
        {
            "name": "sphinx",
            "description": "Explain a topic.",
            "arguments": [{"name": "topic", "description": "What to explain.", "required": True}],
        },
    ]


async def test_no_prompts_no_capability_and_duplicate_names_are_refused() -> None:
    server = Server("empty")
    async with Client(server) as client:
        assert "prompts" not in client.server_capabilities

    @server.prompt()
    def one() -> str:
        return "1"

    with pytest.raises(ValueError, match="one"):
        server.prompt("one")(lambda: "again")


async def test_list_pages_follow_cursors_and_forged_cursors_fail() -> None:
    server = Server("paged", page_size=2)
    for i in range(5):
        server.add_prompt(lambda: "x", name=f"p{i}")

    async with Client(server) as client:
        names: list[str] = []
        params: dict[str, Any] = {}
        pages = 0
        while True:
            page = await client.request("prompts/list", params)
            pages += 1
            names += [prompt["name"] for prompt in page["prompts"]]
            if "nextCursor" not in page:
                break
            params = {"cursor": page["nextCursor"]}
        assert names == [f"p{i}" for i in range(5)]
        assert pages == 3

        with pytest.raises(ProtocolError) as forged:
            await client.request("prompts/list", {"cursor": "AAAAAAAAAAE"})
        assert forged.value.code == INVALID_PARAMS

        # The cached list follows the registry: a new prompt shows up in the last page.
        server.add_prompt(lambda: "x", name="p5")
        page = await client.request("prompts/list", params)
        assert [prompt["name"] for prompt in page["prompts"]] == ["p4", "p5"]


# -- prompts/get: arguments --------------------------------------------------------------------


async def test_a_string_becomes_one_user_message_and_the_description_comes_along() -> None:
    server = Server("get")

    @server.prompt()
    def review(code: str) -> str:
        """Review code."""
        return f"Please review:\n{code}"

    async with Client(server) as client:
        result = await get(client, "review", code="x = 1")
    assert result == {
        "description": "Review code.",
        "messages": [
            {"role": "user", "content": {"type": "text", "text": "Please review:\nx = 1"}}
        ],
    }


async def test_string_arguments_become_the_annotated_types() -> None:
    server = Server("typed")
    seen: dict[str, Any] = {}

    @server.prompt()
    def typed(
        count: int,
        ratio: float,
        strict: bool,
        language: Literal["python", "rust"],
        level: Level,
        limit: int | None = None,
        note: str = "none",
        choice: Literal[1, 2] | None = None,
    ) -> str:
        seen.update({k: v for k, v in locals().items() if k != "seen"})
        return "ok"

    async with Client(server) as client:
        await get(
            client,
            "typed",
            count="3",
            ratio="0.5",
            strict="true",
            language="rust",
            level="high",
            limit="10",
            choice="2",
        )
        assert seen == {
            "count": 3,
            "ratio": 0.5,
            "strict": True,
            "language": "rust",
            "level": Level.HIGH,
            "limit": 10,
            "note": "none",  # left out: the default
            "choice": 2,
        }

        # Forgiving spellings: bool words, Enum names, case.
        await get(
            client, "typed", count=" 7 ", ratio="1e3", strict="No", language="Python", level="LOW"
        )
        assert (seen["count"], seen["ratio"], seen["strict"]) == (7, 1000.0, False)
        assert (seen["language"], seen["level"], seen["limit"]) == ("python", Level.LOW, None)


@pytest.mark.parametrize(
    ("argument", "value", "expected"),
    [
        ("count", "three", "an integer"),
        ("ratio", "half", "a number"),
        ("strict", "maybe", "true or false"),
        ("language", "cobol", "one of 'python', 'rust'"),
        ("level", "medium", "one of 'low', 'high'"),
        ("when", "soon", "an integer or one of 'never'"),
    ],
)
async def test_an_argument_that_does_not_convert_is_invalid_params_naming_it(
    argument: str, value: str, expected: str
) -> None:
    server = Server("typed")

    @server.prompt()
    def typed(
        count: int = 0,
        ratio: float = 0.0,
        strict: bool = False,
        language: Literal["python", "rust"] = "python",
        level: Level = Level.LOW,
        when: int | Literal["never"] = "never",
    ) -> str:
        return "ok"

    async with Client(server) as client:
        error = await refused(client, "typed", {argument: value})
    assert error.code == INVALID_PARAMS
    assert repr(argument) in error.message
    assert error.message.endswith(f"expected {expected}")
    assert error.data == {"prompt": "typed", "argument": argument, "expected": expected}


async def test_missing_unknown_and_malformed_are_invalid_params() -> None:
    server = Server("errors")

    @server.prompt()
    def pair(first: str, second: str, third: str = "") -> str:
        return first + second

    async with Client(server) as client:
        missing = await refused(client, "pair", {"first": "a"})
        assert missing.code == INVALID_PARAMS
        assert missing.message == "Missing required argument 'second' for prompt 'pair'"
        assert missing.data == {"prompt": "pair", "missing": ["second"]}

        both = await refused(client, "pair", None)
        assert both.message == "Missing required arguments 'first', 'second' for prompt 'pair'"

        unknown = await refused(client, "nope", {})
        assert unknown.code == INVALID_PARAMS
        assert "nope" in unknown.message
        assert unknown.data == {"name": "nope"}

        not_a_string = await refused(client, "pair", {"first": 1, "second": "b"})
        assert not_a_string.code == INVALID_PARAMS
        assert "'first'" in not_a_string.message
        assert not_a_string.message.endswith("expected a string")

        not_an_object = await refused(client, "pair", ["a", "b"])
        assert not_an_object.code == INVALID_PARAMS

        # Extra arguments are ignored; the session still works after the errors.
        result = await get(client, "pair", first="a", second="b", extra="z")
        assert texts(result) == [("user", "ab")]


async def test_context_is_injected_and_async_prompts_work() -> None:
    server = Server("ctx")

    @server.prompt()
    async def about(topic: str, ctx: Context) -> str:
        await asyncio.sleep(0)
        return f"{topic} at {ctx.protocol_version} for {ctx.client_info['name']}"

    async with Client(server, name="tester", protocol_version="2025-06-18") as client:
        listed = await client.request("prompts/list")
        assert listed["prompts"][0]["arguments"] == [{"name": "topic", "required": True}]
        result = await get(client, "about", topic="MCP")
    assert texts(result) == [("user", "MCP at 2025-06-18 for tester")]


# -- prompts/get: results ----------------------------------------------------------------------

IMAGE = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
AUDIO = {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"}
RESOURCE = {
    "type": "resource",
    "resource": {"uri": "docs://style", "mimeType": "text/plain", "text": "Use tabs."},
}
LINK = {"type": "resource_link", "uri": "docs://guide", "name": "guide"}


async def test_messages_in_every_form_and_every_content_type() -> None:
    server = Server("messages")

    @server.prompt()
    def helpers(code: str) -> list[Any]:
        return [
            UserMessage(f"Review {code}"),
            AssistantMessage("Sure. Which style guide?"),
            UserMessage(RESOURCE),
            UserMessage(IMAGE),
            AssistantMessage(AUDIO),
            "plain strings are user messages",
        ]

    @server.prompt()
    def wire() -> list[dict[str, Any]]:
        return [
            {"role": "user", "content": {"type": "text", "text": "hi"}},
            {"role": "assistant", "content": "shorthand text"},
            {"role": "user", "content": LINK},
        ]

    @server.prompt()
    def one_block() -> dict[str, Any]:
        return IMAGE

    @server.prompt()
    def helper_objects() -> list[Any]:
        return [Picture(), AssistantMessage(Picture())]

    @server.prompt()
    async def models() -> Any:
        resource = TextResourceContents(uri="docs://a", mime_type="text/plain", text="A")
        return (
            UserMessage(ImageContent(type="image", data="AAAA", mime_type="image/jpeg")),
            EmbeddedResource(type="resource", resource=resource),
        )

    async with Client(server) as client:
        assert (await get(client, "helpers", code="x"))["messages"] == [
            {"role": "user", "content": {"type": "text", "text": "Review x"}},
            {"role": "assistant", "content": {"type": "text", "text": "Sure. Which style guide?"}},
            {"role": "user", "content": RESOURCE},
            {"role": "user", "content": IMAGE},
            {"role": "assistant", "content": AUDIO},
            {
                "role": "user",
                "content": {"type": "text", "text": "plain strings are user messages"},
            },
        ]
        assert (await get(client, "wire"))["messages"] == [
            {"role": "user", "content": {"type": "text", "text": "hi"}},
            {"role": "assistant", "content": {"type": "text", "text": "shorthand text"}},
            {"role": "user", "content": LINK},
        ]
        assert (await get(client, "one_block"))["messages"] == [{"role": "user", "content": IMAGE}]
        assert (await get(client, "helper_objects"))["messages"] == [
            {"role": "user", "content": IMAGE},
            {"role": "assistant", "content": IMAGE},
        ]
        assert (await get(client, "models"))["messages"] == [
            {
                "role": "user",
                "content": {"type": "image", "data": "AAAA", "mimeType": "image/jpeg"},
            },
            {
                "role": "user",
                "content": {
                    "type": "resource",
                    "resource": {"uri": "docs://a", "mimeType": "text/plain", "text": "A"},
                },
            },
        ]


async def test_a_full_get_prompt_result_passes_through() -> None:
    server = Server("full")
    full = {
        "description": "Its own description",
        "messages": [{"role": "user", "content": {"type": "text", "text": "t"}}],
        "_meta": {"k": "v"},
    }

    @server.prompt()
    def own() -> dict[str, Any]:
        """The prompt's description."""
        return full

    @server.prompt()
    def bare() -> dict[str, Any]:
        """Added when the result has none."""
        return {"messages": []}

    async with Client(server) as client:
        assert await get(client, "own") == full
        assert await get(client, "bare") == {
            "description": "Added when the result has none.",
            "messages": [],
        }


async def test_failures_inside_a_prompt(caplog: pytest.LogCaptureFixture) -> None:
    server = Server("failing")

    @server.prompt()
    def broken() -> str:
        raise RuntimeError("secret internals")

    @server.prompt()
    def picky(name: str) -> str:
        raise InvalidParams(f"No such project: {name}")

    @server.prompt()
    def wrong_role() -> dict[str, Any]:
        return {"role": "system", "content": "nope"}

    @server.prompt()
    def not_a_message() -> int:
        return 42

    async with Client(server) as client:
        with caplog.at_level(logging.ERROR, logger="mcpkit"):
            for name in ("broken", "wrong_role", "not_a_message"):
                error = await refused(client, name, {})
                assert error.code == INTERNAL_ERROR
                assert "secret" not in error.message
        assert "secret internals" in caplog.text  # in the server's log, not on the wire

        error = await refused(client, "picky", {"name": "zed"})
        assert (error.code, error.message) == (INVALID_PARAMS, "No such project: zed")


# -- list_changed ------------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def listening(server: Server) -> AsyncIterator[asyncio.Queue[str]]:
    """A raw client session on `server` that puts every notification's method on a queue."""
    client_end, server_end = memory_pair()
    served = asyncio.create_task(server.serve(server_end))
    methods: asyncio.Queue[str] = asyncio.Queue()

    def on_notification(session: Session, event: NotificationReceived) -> None:
        methods.put_nowait(event.method)

    config = ConnectionConfig(role="client", info={"name": "listener", "version": "1"})
    session = Session(Connection(config), client_end, on_notification=on_notification)
    session.start()
    await session.initialize()
    await session.request("ping")  # the server has seen notifications/initialized too
    try:
        yield methods
    finally:
        await session.close()
        await asyncio.wait_for(served, 2)


async def test_prompts_added_and_removed_at_run_time_are_announced() -> None:
    server = Server("changing")

    @server.prompt()
    def first() -> str:
        return "1"

    def second() -> str:
        return "2"

    async with listening(server) as methods:
        server.prompt()(second)
        assert await asyncio.wait_for(methods.get(), 2) == "notifications/prompts/list_changed"
        server.remove_prompt("second")
        assert await asyncio.wait_for(methods.get(), 2) == "notifications/prompts/list_changed"
        with pytest.raises(KeyError):
            server.remove_prompt("never-there")
        assert methods.empty()
