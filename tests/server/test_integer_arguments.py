"""Arguments are accepted exactly when the inputSchema the server advertises accepts them
(issue 23, bug 4): JSON Schema counts 3.0 as an integer, so the server must too, and the
handler of an `int` parameter receives an int.

Held-out values go through a full JSON Schema 2020-12 validator (`jsonschema`) against each
tool's advertised inputSchema and through the server via a real client; the two must agree.
Tools cover both argument paths: the plain one (JSON's own types, checked by hand) and the
typed one (pydantic, for Enums, bounds, sets and models). Not covered, on purpose: `format`
(date-time, uuid, ...), which the server checks and JSON Schema only annotates with.
"""

from __future__ import annotations

import enum
from typing import Annotated, Any, Literal

import jsonschema
import pytest
from pydantic import BaseModel, Field

from mcpkit import Server
from mcpkit.testing import call, connect, tools_by_name


class Size(enum.Enum):
    SMALL = "small"
    LARGE = "large"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Point(BaseModel):
    x: int
    y: int = 0


def leaves(value: Any) -> list[str]:
    """The Python types a handler received, leaf by leaf."""
    if isinstance(value, list):
        return [name for item in value for name in leaves(item)]
    if isinstance(value, dict):
        return [name for item in value.values() for name in leaves(item)]
    if isinstance(value, BaseModel):
        return leaves(dict(value))
    return [type(value).__name__]


server = Server("integers")


@server.tool()
def plain_int(v: int) -> list[str]:
    return leaves(v)


@server.tool()
def plain_optional(v: int | None = None) -> list[str]:
    return leaves(v)


@server.tool()
def plain_list(v: list[int]) -> list[str]:
    return leaves(v)


@server.tool()
def plain_nested(v: list[list[int]]) -> list[str]:
    return leaves(v)


@server.tool()
def plain_object(v: dict[str, int]) -> list[str]:
    return leaves(v)


@server.tool()
def plain_union(v: int | str) -> list[str]:
    return leaves(v)


@server.tool()
def plain_number(v: float) -> list[str]:
    return leaves(v)


@server.tool()
def plain_literal(v: Literal[1, 2, 3]) -> list[str]:
    return leaves(v)


@server.tool()
def typed_int(v: int, size: Size = Size.SMALL) -> list[str]:  # the Enum makes it typed
    return leaves(v)


@server.tool()
def typed_bounded(v: Annotated[int, Field(ge=0, le=10)]) -> list[str]:
    return leaves(v)


@server.tool()
def typed_enum(v: Level) -> list[str]:
    return leaves(v.value)


@server.tool()
def typed_str_enum(v: Size) -> list[str]:
    return leaves(v.value)


@server.tool()
def typed_nested(v: dict[str, list[int]], size: Size = Size.SMALL) -> list[str]:
    return leaves(v)


@server.tool()
def typed_model(v: Point) -> list[str]:
    return leaves(v)


@server.tool()
def typed_optional(v: Annotated[int, Field(ge=0)] | None = None) -> list[str]:
    return leaves(v)


@server.tool()
def typed_literal(v: Literal[1, 2, 3], size: Size = Size.SMALL) -> list[str]:
    return leaves(v)


@server.tool()
def typed_enum_list(v: list[Level]) -> list[str]:
    return leaves([level.value for level in v])


@server.tool()
def typed_flag(v: Literal[True], size: Size = Size.SMALL) -> list[str]:
    return leaves(v)


@server.tool()
def plain_flag(v: Literal[True]) -> list[str]:
    return leaves(v)


@server.tool()
def typed_set(v: set[int]) -> list[str]:  # uniqueItems: pydantic alone would drop duplicates
    return leaves(sorted(v))


# Tools whose parameter holds only integers: an accepted value must arrive as ints.
ONLY_INTEGERS = {
    "plain_int", "plain_list", "plain_nested", "plain_object", "plain_literal", "typed_int",
    "typed_bounded", "typed_enum", "typed_nested", "typed_model", "typed_literal",
    "typed_enum_list", "typed_set",
}  # fmt: skip
SCALARS: list[Any] = [
    0, 3, -1, 3.0, -1.0, 0.0, 10.0, 11.0, 3.5, -0.5, 1e300, True, False, "3", "3.0", None,
    2**63 - 1, 2**63, -(2**63), 2**64, -(2**70), 1.0, 2.0, "small", "LARGE",
]  # fmt: skip
CONTAINERS: list[Any] = [
    [], [1, 2], [1.0, 2], [1, 2.5], [True], [2, True], ["1"], [1, 1], [1, 1.0], [2, 2.0, 3],
    [[1.0], [2, 3]], [[1], [2.5]], [None],
    {}, {"a": 1}, {"a": 1.0}, {"a": 1.5}, {"a": "1"}, {"a": [1.0, 2]}, {"a": [1, 2.5]},
    {"x": 3.0}, {"x": 1, "y": 2.0}, {"x": 1.5}, {"x": True}, {"y": 1},
]  # fmt: skip
HELD_OUT = SCALARS + CONTAINERS


def case_id(value: Any) -> str:
    return repr(value)[:30]


@pytest.mark.parametrize("value", HELD_OUT, ids=case_id)
async def test_the_server_accepts_exactly_what_its_input_schema_accepts(value: Any) -> None:
    disagreements = []
    async with connect(server) as client:
        for name, tool in (await tools_by_name(client)).items():
            schema = tool["inputSchema"]  # as advertised, over the wire
            jsonschema.Draft202012Validator.check_schema(schema)
            valid = jsonschema.Draft202012Validator(schema).is_valid({"v": value})
            result = await call(client, name, v=value)
            accepted = result["isError"] is False
            if accepted != valid:
                disagreements.append((name, valid, result["content"][0]["text"]))
            elif accepted and name in ONLY_INTEGERS:
                received = result["structuredContent"]["result"]
                assert set(received) <= {"int"}, (name, value, received)
    assert not disagreements, disagreements


async def test_an_int_parameter_given_a_whole_float_receives_an_int() -> None:
    async with connect(server) as client:
        for name in ("plain_int", "plain_optional", "typed_int", "typed_bounded", "typed_enum"):
            result = await call(client, name, v=2.0)
            assert result["structuredContent"] == {"result": ["int"]}, (name, result)
        refused = await call(client, "plain_int", v=2.5)
        assert refused["isError"] is True
        assert "v: expected integer, got float" in refused["content"][0]["text"]
        refused = await call(client, "typed_bounded", v=12.0)
        assert refused["isError"] is True
        assert "less than or equal to 10" in refused["content"][0]["text"]


async def test_what_pydantic_alone_would_let_through_is_refused_with_the_reason() -> None:
    async with connect(server) as client:
        for name, value, reason in [
            ("typed_enum", True, "v: not one of the allowed values (true is not 1"),
            ("typed_literal", True, "v: not one of the allowed values (true is not 1"),
            ("typed_flag", 1, "v: not one of the allowed values"),
            ("typed_set", [1, 1.0], "v: the items must be unique"),
        ]:
            refused = await call(client, name, v=value)
            assert refused["isError"] is True, (name, value)
            assert reason in refused["content"][0]["text"], refused
