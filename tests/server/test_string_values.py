"""One string-to-value conversion for prompt arguments and resource template variables: the
same spelling gives the same value (or the same refusal) through `prompts/get` and through
`resources/read`, each seen from a connected client."""

from __future__ import annotations

import enum
from typing import Any, Literal
from urllib.parse import quote

import pytest

from mcpkit import Client, Server
from mcpkit.errors import INVALID_PARAMS, ProtocolError


class Level(enum.Enum):
    LOW = "low"
    HIGH = "high"


class Size(enum.Enum):
    SMALL = 1
    LARGE = 2


ACCEPTED: list[tuple[Any, str, Any]] = [
    (bool, "true", True),
    (bool, "FALSE", False),
    (bool, "yes", True),
    (bool, "Off", False),
    (bool, "1", True),
    (bool, " on ", True),
    (int, "42", 42),
    (int, "-7", -7),
    (int, " +3 ", 3),
    (float, "0.25", 0.25),
    (float, "1e3", 1000.0),
    (float, ".5", 0.5),
    (float, "-2", -2.0),
    (Level, "high", Level.HIGH),
    (Level, "HIGH", Level.HIGH),  # the member's name
    (Level, "Low", Level.LOW),
    (Size, "2", Size.LARGE),
    (Size, "small", Size.SMALL),
    (Literal["python", "rust"], "rust", "rust"),
    (Literal["python", "rust"], "Python", "python"),
    (Literal[1, 2], "2", 2),
    (Literal[True], "True", True),
    (int | None, "5", 5),
    (int | Literal["never"], "NEVER", "never"),
    (int | Literal["never"], "12", 12),
    (int | str, "12", "12"),  # a union with str takes the string as it is
    (str, " as it is ", " as it is "),
    (Any, "yes", "yes"),
]

REFUSED: list[tuple[Any, str, str]] = [
    (bool, "maybe", "true or false"),
    (int, "1_000", "an integer"),
    (int, "1.0", "an integer"),
    (int, "\u0663", "an integer"),  # ARABIC-INDIC DIGIT THREE: int() would take it
    (float, "nan", "a number"),
    (float, "inf", "a number"),
    (float, "1e999", "a number"),
    (float, "1_0", "a number"),
    (Level, "medium", "one of 'low', 'high'"),
    (Literal["python", "rust"], "cobol", "one of 'python', 'rust'"),
    (int | Literal["never"], "soon", "an integer or one of 'never'"),
]


def server_taking(annotation: Any) -> tuple[Server, list[Any]]:
    """A server whose prompt `take` and template `value://{value}` pass `value`, annotated
    `annotation`, to the same function; `seen` records what it got."""
    seen: list[Any] = []

    def take(value: Any) -> str:
        seen.append(value)
        return "taken"

    take.__annotations__ = {"value": annotation, "return": str}
    server = Server("values")
    server.prompt("take")(take)
    server.resource("value://{value}")(take)
    return server, seen


@pytest.mark.parametrize(("annotation", "text", "value"), ACCEPTED)
async def test_prompts_and_templates_read_a_string_the_same_way(
    annotation: Any, text: str, value: Any
) -> None:
    server, seen = server_taking(annotation)
    async with Client(server) as client:
        await client.get_prompt("take", {"value": text})
        await client.read_resource("value://" + quote(text, safe=""))
    assert seen == [value, value]
    assert [type(v) for v in seen] == [type(value)] * 2  # 2 stays 2, never 2.0 or True


@pytest.mark.parametrize(("annotation", "text", "expected"), REFUSED)
async def test_prompts_and_templates_refuse_the_same_strings(
    annotation: Any, text: str, expected: str
) -> None:
    server, seen = server_taking(annotation)
    async with Client(server) as client:
        with pytest.raises(ProtocolError) as prompt_error:
            await client.get_prompt("take", {"value": text})
        uri = "value://" + quote(text, safe="")
        with pytest.raises(ProtocolError) as read_error:
            await client.read_resource(uri)
    assert seen == []
    assert prompt_error.value.code == INVALID_PARAMS
    assert prompt_error.value.message.endswith(f"expected {expected}")
    assert read_error.value.data == {"uri": uri}  # this URI names no resource
    assert read_error.value.message.endswith(f"(value: expected {expected})")


async def test_closed_sets_complete_the_same_for_prompts_and_templates() -> None:
    server, _ = server_taking(Literal[True, "auto"])
    async with Client(server) as client:
        prompt = await client.complete("value", "", prompt="take")
        template = await client.complete("value", "", resource="value://{value}")
    assert prompt.completion.values == template.completion.values == ["true", "auto"]
