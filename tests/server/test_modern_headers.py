"""x-mcp-header on the server side: `Annotated[T, Header("Name")]` marks a tool parameter to
be mirrored into an `Mcp-Param-Name` HTTP header (2026-07-28)."""

from __future__ import annotations

from typing import Annotated

import pytest
from pydantic import Field

from mcpkit import Server
from mcpkit.server import Header

from .test_modern_context import call, raw, text


def test_header_marks_the_property_on_the_plain_path() -> None:
    server = Server("sql")

    @server.tool()
    def execute_sql(region: Annotated[str, Header("Region")], query: str) -> str:
        """Run SQL.

        Args:
            region: Where to run it.
        """
        return f"{region}: {query}"

    schema = server.tools.get("execute_sql").definition["inputSchema"]  # type: ignore[union-attr]
    assert schema["properties"]["region"] == {
        "type": "string",
        "description": "Where to run it.",
        "x-mcp-header": "Region",
    }
    assert "x-mcp-header" not in schema["properties"]["query"]


def test_header_with_other_metadata_on_the_typed_path() -> None:
    server = Server("typed")

    @server.tool()
    def scale(
        factor: Annotated[int, Header("Factor"), Field(ge=1, description="How much")] = 2,
        flag: Annotated[bool, Header("Flag")] = False,
    ) -> int:
        return factor

    schema = server.tools.get("scale").definition["inputSchema"]  # type: ignore[union-attr]
    factor = schema["properties"]["factor"]
    assert factor["x-mcp-header"] == "Factor"
    assert factor["minimum"] == 1 and factor["description"] == "How much"
    assert schema["properties"]["flag"]["x-mcp-header"] == "Flag"


async def test_a_marked_tool_is_called_as_usual() -> None:
    server = Server("sql")

    @server.tool()
    def execute_sql(region: Annotated[str, Header("Region")], query: str) -> str:
        return f"{region}: {query}"

    async with raw(server) as peer:
        listed = await peer.request("tools/list")
        assert listed["tools"][0]["inputSchema"]["properties"]["region"]["x-mcp-header"] == (
            "Region"
        )
        result = await peer.request("tools/call", call("execute_sql", region="eu", query="q"))
        assert text(result) == "eu: q"


def test_two_headers_on_one_parameter_fail_at_registration() -> None:
    server = Server("bad")
    with pytest.raises(ValueError, match="one Header per parameter"):

        @server.tool()
        def twice(region: Annotated[str, Header("A"), Header("B")]) -> str:
            return region
