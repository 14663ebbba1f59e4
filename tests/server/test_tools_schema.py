"""Tool inputSchema from signatures and docstrings, and argument validation, seen from a client.

This module uses `from __future__ import annotations` on purpose: every annotation below is a
string the server has to resolve, including models defined inside test functions.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import uuid
from typing import TYPE_CHECKING, Annotated, Any, Literal, NotRequired, TypedDict

import pytest
from pydantic import BaseModel, Field

from mcpkit import Client, Server
from mcpkit.errors import INVALID_PARAMS, ProtocolError
from mcpkit.testing import call, tools_by_name

if TYPE_CHECKING:
    from mcpkit.server.context import Context


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Address(BaseModel):
    street: str
    city: str = "Paris"


class Person(BaseModel):
    name: str
    age: int = Field(ge=0)
    address: Address


@dataclasses.dataclass
class Point:
    x: int
    y: int = 0


class Movie(TypedDict):
    title: str
    year: NotRequired[int]


def text(result: dict[str, Any]) -> str:
    return str(result["content"][0]["text"])


# -- schemas from JSON's own types -------------------------------------------------------------


async def test_json_types_defaults_and_required() -> None:
    server = Server("schemas")

    @server.tool()
    def plain(
        s: str,
        i: int,
        f: float,
        b: bool,
        tags: list[str],
        scores: dict[str, float],
        mode: Literal["fast", "slow"],
        anything: Any,
        maybe: int | None = None,
        limit: int = 10,
        raw: dict = {},  # noqa: B006 - not JSON-representable as a default: left out
    ) -> None:
        pass

    async with Client(server) as client:
        schema = (await tools_by_name(client))["plain"]["inputSchema"]
    assert schema == {
        "type": "object",
        "properties": {
            "s": {"type": "string"},
            "i": {"type": "integer"},
            "f": {"type": "number"},
            "b": {"type": "boolean"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "scores": {"type": "object", "additionalProperties": {"type": "number"}},
            "mode": {"enum": ["fast", "slow"]},
            "anything": {},
            "maybe": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None},
            "limit": {"type": "integer", "default": 10},
            "raw": {"type": "object"},
        },
        "required": ["s", "i", "f", "b", "tags", "scores", "mode", "anything"],
    }


async def test_a_tool_without_parameters_and_the_context_left_out() -> None:
    server = Server("schemas")

    @server.tool()
    async def now(ctx: Context) -> str:
        return str(ctx.request_id)

    async with Client(server) as client:
        tool = (await tools_by_name(client))["now"]
        assert tool["inputSchema"] == {"type": "object", "properties": {}}
        assert text(await call(client, "now")) != ""


# -- docstrings --------------------------------------------------------------------------------


async def test_google_numpy_and_sphinx_docstrings_describe_parameters() -> None:
    server = Server("docs")

    @server.tool()
    def google(city: str, days: int = 3) -> str:
        """Forecast the weather.

        Uses the national service; cached for an hour.

        Args:
            city (str): Where to look,
                by name.
            days: How many days ahead.

        Returns:
            The forecast.
        """
        return city

    @server.tool()
    def numpy(city: str, days: int = 3) -> str:
        """Forecast the weather.

        Parameters
        ----------
        city : str
            Where to look,
            by name.
        days : int, optional
            How many days ahead.

        Returns
        -------
        str
        """
        return city

    @server.tool()
    def sphinx(city: str, days: int = 3) -> str:
        """Forecast the weather.

        :param str city: Where to look,
            by name.
        :param days: How many days ahead.
        :returns: The forecast.
        """
        return city

    async with Client(server) as client:
        tools = await tools_by_name(client)
    assert tools["google"]["description"] == (
        "Forecast the weather.\n\nUses the national service; cached for an hour."
    )
    for name in ("google", "numpy", "sphinx"):
        properties = tools[name]["inputSchema"]["properties"]
        assert properties["city"]["description"] == "Where to look, by name.", name
        assert properties["days"] == {
            "type": "integer",
            "description": "How many days ahead.",
            "default": 3,
        }, name
    assert tools["numpy"]["description"] == "Forecast the weather."
    assert tools["sphinx"]["description"] == "Forecast the weather."


async def test_explicit_description_wins_over_the_docstring() -> None:
    server = Server("docs")

    @server.tool(description="Explicit.")
    def f() -> None:
        """From the docstring."""

    async with Client(server) as client:
        assert (await tools_by_name(client))["f"]["description"] == "Explicit."


# -- typed parameters --------------------------------------------------------------------------


async def test_rich_types_are_described_and_converted_before_the_call() -> None:
    server = Server("typed")
    seen: dict[str, Any] = {}

    @server.tool()
    def book(
        person: Person,
        when: datetime.datetime,
        day: datetime.date,
        color: Color,
        where: Point,
        movie: Movie,
        ticket: uuid.UUID,
        seat: tuple[int, str],
        extras: set[str] = frozenset(),  # type: ignore[assignment]
    ) -> str:
        seen.update(locals())
        return "booked"

    async with Client(server) as client:
        schema = (await tools_by_name(client))["book"]["inputSchema"]
        arguments = {
            "person": {"name": "Ada", "age": 36, "address": {"street": "1 Main"}},
            "when": "2025-03-01T12:30:00Z",
            "day": "2025-03-01",
            "color": "blue",
            "where": {"x": 3},
            "movie": {"title": "Metropolis"},
            "ticket": "12345678-1234-5678-1234-567812345678",
            "seat": [7, "B"],
            "extras": ["popcorn", "soda"],
        }
        assert text(await call(client, "book", **arguments)) == "booked"
        # The schema says uniqueItems: duplicates are refused, as a validating client would.
        twice = await call(client, "book", **{**arguments, "extras": ["popcorn", "popcorn"]})
        assert twice["isError"] is True and "extras" in text(twice)

    assert schema["required"] == [
        "person", "when", "day", "color", "where", "movie", "ticket", "seat",
    ]  # fmt: skip
    properties = schema["properties"]
    assert properties["person"] == {"$ref": "#/$defs/Person"}
    assert schema["$defs"]["Person"]["properties"]["address"] == {"$ref": "#/$defs/Address"}
    assert schema["$defs"]["Person"]["properties"]["age"] == {"minimum": 0, "type": "integer"}
    assert schema["$defs"]["Color"]["enum"] == ["red", "blue"]
    assert schema["$defs"]["Movie"]["required"] == ["title"]
    assert properties["when"] == {"type": "string", "format": "date-time"}
    assert properties["day"] == {"type": "string", "format": "date"}
    assert properties["ticket"] == {"type": "string", "format": "uuid"}
    assert properties["extras"]["uniqueItems"] is True
    assert properties["extras"]["default"] == []
    assert "title" not in properties["when"]  # no titles made up from parameter names

    assert seen["person"] == Person(name="Ada", age=36, address=Address(street="1 Main"))
    assert seen["when"] == datetime.datetime(2025, 3, 1, 12, 30, tzinfo=datetime.UTC)
    assert seen["day"] == datetime.date(2025, 3, 1)
    assert seen["color"] is Color.BLUE
    assert seen["where"] == Point(3, 0)
    assert seen["movie"] == {"title": "Metropolis"}
    assert seen["ticket"] == uuid.UUID("12345678-1234-5678-1234-567812345678")
    assert seen["seat"] == (7, "B")
    assert seen["extras"] == {"popcorn", "soda"}


async def test_field_descriptions_constraints_and_field_defaults() -> None:
    server = Server("fields")

    @server.tool()
    def page(
        query: Annotated[str, Field(description="What to look for", min_length=1)],
        size: int = Field(20, description="Results per page", ge=1, le=100),
        offset: Annotated[int, Field(ge=0)] = 0,
    ) -> str:
        """Search.

        Args:
            query: Overridden by the Field description.
            offset: Where to start.
        """
        return f"{query}:{size}:{offset}"

    async with Client(server) as client:
        schema = (await tools_by_name(client))["page"]["inputSchema"]
        assert text(await call(client, "page", query="cats")) == "cats:20:0"
        refused = await call(client, "page", query="", size=1000, offset=-1)

    assert schema["required"] == ["query"]
    assert schema["properties"]["query"] == {
        "type": "string",
        "description": "What to look for",
        "minLength": 1,
    }
    assert schema["properties"]["size"] == {
        "type": "integer",
        "description": "Results per page",
        "minimum": 1,
        "maximum": 100,
        "default": 20,
    }
    assert schema["properties"]["offset"] == {
        "type": "integer",
        "minimum": 0,
        "default": 0,
        "description": "Where to start.",
    }
    assert refused["isError"] is True
    message = text(refused)
    for field in ("query: String should have at least 1 character", "size:", "offset:"):
        assert field in message


async def test_models_defined_inside_a_function_resolve_under_future_annotations() -> None:
    server = Server("local")

    class Box(BaseModel):
        width: float
        height: float

    @server.tool()
    def area(box: Box) -> float:
        return box.width * box.height

    async with Client(server) as client:
        result = await call(client, "area", box={"width": 2, "height": 3.5})
    assert result["structuredContent"] == {"result": 7.0}


def test_unresolvable_annotations_are_refused_at_registration() -> None:
    server = Server("bad")

    def uses_a_missing_type(x: NoSuchType) -> str:  # type: ignore[name-defined]  # noqa: F821
        return "never"

    with pytest.raises(TypeError, match="cannot evaluate the annotation 'NoSuchType'"):
        server.add_tool(uses_a_missing_type)

    class Opaque:
        pass

    def opaque(x: Opaque) -> str:
        return "never"

    with pytest.raises(TypeError, match="cannot describe the parameters of 'opaque'"):
        server.add_tool(opaque)

    def positional(x: int, /) -> int:
        return x

    with pytest.raises(TypeError, match="positional-only"):
        server.add_tool(positional)
    assert len(server.tools) == 0


# -- validation --------------------------------------------------------------------------------


def validation_server() -> Server:
    server = Server("validation")

    @server.tool()
    def add(a: int, b: float, flag: bool = False) -> float:
        return a + b

    @server.tool()
    def move(person: Person, times: int) -> str:
        return f"{person.name} x{times}"

    return server


@pytest.mark.parametrize("tool", ["add", "move"])
async def test_bad_arguments_are_a_tool_error_naming_each_field_from_2025_11_25(
    tool: str,
) -> None:
    bad = {
        "add": {"a": "1", "b": "x", "flag": 1},
        "move": {"person": {"name": 5, "age": -1, "address": {}}, "times": "2"},
    }[tool]
    async with Client(validation_server(), protocol_version="2025-11-25") as client:
        result = await call(client, tool, **bad)
        missing = await call(client, tool)
    assert result["isError"] is True
    message = text(result)
    assert message.startswith(f"Invalid arguments for tool {tool}: ")
    expected = {
        "add": ["a: expected integer, got str", "b: expected number, got str", "flag:"],
        "move": [
            "person.name: Input should be a valid string (got integer)",
            "person.age: Input should be greater than or equal to 0",
            "person.address.street: field required",
            "times: Input should be a valid integer (got string)",
        ],
    }[tool]
    for part in expected:
        assert part in message
    assert missing["isError"] is True
    assert "required argument missing" in text(missing)


@pytest.mark.parametrize("tool", ["add", "move"])
async def test_bad_arguments_are_invalid_params_before_2025_11_25(tool: str) -> None:
    bad = {"add": {"a": 1.5, "b": 1}, "move": {"person": {}, "times": 1}}[tool]
    async with Client(validation_server(), protocol_version="2025-06-18") as client:
        with pytest.raises(ProtocolError) as caught:
            await call(client, tool, **bad)
    assert caught.value.code == INVALID_PARAMS
    assert caught.value.data["tool"] == tool
    assert caught.value.data["problems"]
    assert f"Invalid arguments for tool {tool}" in caught.value.message


async def test_json_rules_on_both_paths_and_unknown_arguments_dropped() -> None:
    async with Client(validation_server()) as client:
        # An integer is a number; extra arguments are not passed on.
        assert text(await call(client, "add", a=1, b=2, unknown="x")) == "3"
        moved = await call(
            client,
            "move",
            person={"name": "Ada", "age": 3, "address": {"street": "s"}},
            times=2,
            unknown=1,
        )
        assert text(moved) == "Ada x2"
        # A boolean is not an integer, on either path.
        assert (await call(client, "add", a=True, b=1))["isError"] is True
        assert (await call(client, "move", person={}, times=True))["isError"] is True


async def test_unknown_tool_is_invalid_params_at_every_revision() -> None:
    for revision in ("2024-11-05", "2025-11-25"):
        async with Client(validation_server(), protocol_version=revision) as client:
            with pytest.raises(ProtocolError) as caught:
                await call(client, "nope")
            assert caught.value.code == INVALID_PARAMS
            assert "Unknown tool: nope" in caught.value.message
