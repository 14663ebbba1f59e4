"""Tools, prompts, resources and completion providers read annotations one way (issue 23).

This module uses `from __future__ import annotations` on purpose: every annotation is a string
the server resolves, including Enums defined inside the test functions (found through the
locals of the code that registers them), and a name that resolves nowhere is an error at
registration naming the function and the name.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING

import pytest

from mcpkit import Server
from mcpkit.errors import ProtocolError
from mcpkit.testing import call, connect, texts

if TYPE_CHECKING:
    from mcpkit.server.context import Context


def described(value: object) -> str:
    """What the handler received, so the test sees the type and not only the text."""
    return f"{type(value).__name__}:{getattr(value, 'name', value)}"


async def test_a_function_local_enum_reaches_tools_prompts_and_templates_as_a_member() -> None:
    class Size(enum.Enum):
        SMALL = "small"
        LARGE = "large"

    server = Server("local-enum")

    @server.tool()
    def pick(size: Size) -> str:
        return described(size)

    @server.prompt()
    def order(size: Size) -> str:
        return described(size)

    @server.resource("size://{size}")
    def size_page(size: Size) -> str:
        return described(size)

    async with connect(server) as client:
        assert texts(await call(client, "pick", size="large")) == ["Size:LARGE"]
        got = await client.request("prompts/get", {"name": "order", "arguments": {"size": "small"}})
        assert texts(got) == ["Size:SMALL"]
        read = await client.request("resources/read", {"uri": "size://large"})
        assert texts(read) == ["Size:LARGE"]
        # The Enum is a closed set for the prompt and the template: completion offers it.
        ref = {"type": "ref/prompt", "name": "order"}
        done = await client.request(
            "completion/complete", {"ref": ref, "argument": {"name": "size", "value": ""}}
        )
        assert done["completion"]["values"] == ["small", "large"]
        # A value outside the Enum is refused as an argument error, not a -32603.
        with pytest.raises(ProtocolError) as refused:
            await client.request("prompts/get", {"name": "order", "arguments": {"size": "huge"}})
        assert refused.value.code == -32602


async def test_registered_in_one_function_defined_with_names_from_its_scope() -> None:
    def make_server() -> Server:
        class Level(enum.IntEnum):
            LOW = 1
            HIGH = 2

        server = Server("factory")

        @server.resource("level://{level}")
        def level_page(level: Level) -> str:
            return described(level)

        server.add_tool(level_tool(Level))
        return server

    def level_tool(level_type: type[enum.IntEnum]) -> object:
        # Registered elsewhere: `level_type` is found because the body closes over it.
        def level(value: level_type) -> str:  # type: ignore[valid-type]
            assert isinstance(value, level_type)
            return described(value)

        return level

    async with connect(make_server()) as client:
        assert texts(await client.request("resources/read", {"uri": "level://2"})) == ["Level:HIGH"]
        assert texts(await call(client, "level", value=1)) == ["Level:LOW"]


async def test_context_imported_only_for_type_checking_still_marks_the_context() -> None:
    server = Server("ctx")

    @server.prompt()
    def named(topic: str, ctx: Context) -> str:
        return f"{topic} from {ctx.server.name}"

    @server.resource("topic://{topic}")
    def page(topic: str, ctx: Context) -> str:
        return f"{topic} from {ctx.server.name}"

    async with connect(server) as client:
        got = await client.request("prompts/get", {"name": "named", "arguments": {"topic": "t"}})
        assert texts(got) == ["t from ctx"]
        assert texts(await client.request("resources/read", {"uri": "topic://u"})) == ["u from ctx"]


def test_a_broken_annotation_is_an_error_at_registration_naming_function_and_name() -> None:
    server = Server("broken")

    def tool_fn(x: Missing1) -> str:  # type: ignore[name-defined]  # noqa: F821
        return ""

    def prompt_fn(topic: Missing2) -> str:  # type: ignore[name-defined]  # noqa: F821
        return ""

    def resource_fn(item: Missing3) -> str:  # type: ignore[name-defined]  # noqa: F821
        return ""

    def returns_missing() -> Missing4:  # type: ignore[name-defined]  # noqa: F821
        return None

    def provider(argument: str, value: str, context: Missing5) -> list[str]:  # type: ignore[name-defined]  # noqa: F821
        return []

    cases = [
        (lambda: server.tool(tool_fn), "tool", "tool_fn", "Missing1", "parameter 'x'"),
        (lambda: server.prompt(prompt_fn), "prompt", "prompt_fn", "Missing2", "parameter 'topic'"),
        (
            lambda: server.resource("item://{item}")(resource_fn),
            "resource",
            "resource_fn",
            "Missing3",
            "parameter 'item'",
        ),
        (
            lambda: server.resource("fixed://one")(returns_missing),
            "resource",
            "returns_missing",
            "Missing4",
            "the return annotation",
        ),
        (
            lambda: server.completion("ref/prompt", "p")(provider),
            "completion provider",
            "provider",
            "Missing5",
            "parameter 'context'",
        ),
    ]
    for register, kind, function, name, where in cases:
        with pytest.raises(TypeError) as refused:
            register()
        message = str(refused.value)
        assert message.startswith(f"{kind} ") and f".{function}()" in message, message
        assert f"annotation '{name}'" in message and where in message, message
        assert f"name '{name}' is not defined" in message, message
    assert len(server.tools) == len(server.prompts) == len(server.resources) == 0
    assert len(server.completions) == 0
