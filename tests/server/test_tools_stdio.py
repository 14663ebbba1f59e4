"""Tools over stdio: mcpkit's own client, and the official SDK's client (`mcp==2.3.0`).

This file is also the server the tests start: `python tests/server/test_tools_stdio.py`
serves the tools defined in its first half over stdio (the test half is never reached then).
The official client validates each result against the negotiated revision's schema and each
structuredContent against the tool's outputSchema (with jsonschema), so these tests also
check that the schemas mcpkit generates are ones a real client accepts.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import sys

from pydantic import BaseModel, Field

from mcpkit import Server
from mcpkit.server.content import Image

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8


class Unit(enum.Enum):
    CELSIUS = "celsius"
    FAHRENHEIT = "fahrenheit"


class Place(BaseModel):
    city: str
    country: str = "FR"


class Forecast(BaseModel):
    place: Place
    day: datetime.date
    temperature: float
    unit: Unit


@dataclasses.dataclass
class Stats:
    count: int
    mean: float


server = Server("tools-stdio", version="1.0.0")


@server.tool(title="Forecast", annotations={"readOnlyHint": True, "openWorldHint": True})
def forecast(
    place: Place,
    day: datetime.date,
    unit: Unit = Unit.CELSIUS,
    hours: int = Field(24, ge=1, le=48, description="How far ahead"),
) -> Forecast:
    """Forecast the weather somewhere.

    Args:
        place: Where.
        day: Which day.
    """
    return Forecast(place=place, day=day, temperature=21.5, unit=unit)


@server.tool()
def stats(values: list[float]) -> Stats:
    """Count and average."""
    return Stats(len(values), sum(values) / len(values))


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def chart() -> Image:
    """A tiny PNG."""
    return Image(PNG)


if __name__ == "__main__":
    server.run()
    sys.exit()

# -- the tests ---------------------------------------------------------------------------------

import tempfile  # noqa: E402
from collections.abc import Iterator  # noqa: E402
from typing import IO, Any  # noqa: E402

import pytest  # noqa: E402

from mcpkit import Client  # noqa: E402

THIS_SERVER = [sys.executable, __file__]
REVISIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
FORECAST_ARGS = {"place": {"city": "Lyon"}, "day": "2025-07-14", "unit": "fahrenheit"}
FORECAST = {
    "place": {"city": "Lyon", "country": "FR"},
    "day": "2025-07-14",
    "temperature": 21.5,
    "unit": "fahrenheit",
}


async def test_our_client_over_stdio() -> None:
    async with Client(THIS_SERVER) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        result = await client.call_tool("forecast", FORECAST_ARGS)
        image = await client.call_tool("chart")
        bad = await client.call_tool("forecast", {"place": {}, "day": "someday", "hours": 99})

    assert tools["forecast"].title == "Forecast"
    assert tools["forecast"].description == "Forecast the weather somewhere."
    schema = tools["forecast"].input_schema.model_dump(by_alias=True, exclude_none=True)
    assert schema["required"] == ["place", "day"]
    assert schema["properties"]["hours"]["description"] == "How far ahead"
    assert schema["properties"]["unit"]["default"] == "celsius"
    assert tools["forecast"].output_schema is not None
    assert result.is_error is False
    assert result.structured_content == FORECAST
    assert image.content[0].type == "image"
    assert bad.is_error is True
    message = bad.content[0].text  # type: ignore[union-attr]
    for part in ("place.city: field required", "day: Input should be a valid date", "hours:"):
        assert part in message


# -- the official client -----------------------------------------------------------------------

mcp = pytest.importorskip("mcp", reason="the official SDK is a dev dependency")

import mcp.client.session as official_session_module  # noqa: E402
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402


@pytest.fixture
def errlog() -> Iterator[IO[str]]:
    with tempfile.TemporaryFile("w+") as file:
        yield file


@pytest.mark.interop
@pytest.mark.parametrize("revision", REVISIONS)
async def test_official_client_reads_structured_output(
    revision: str, errlog: IO[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(official_session_module, "LATEST_HANDSHAKE_VERSION", revision)
    parameters = StdioServerParameters(command=sys.executable, args=[__file__])
    async with (
        stdio_client(parameters, errlog=errlog) as (read, write),
        ClientSession(read, write) as session,
    ):
        assert (await session.initialize()).protocol_version == revision
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        forecast = await session.call_tool("forecast", FORECAST_ARGS)
        stats = await session.call_tool("stats", {"values": [1, 2, 3.5]})
        added = await session.call_tool("add", {"a": 2, "b": 3})
        chart = await session.call_tool("chart", {})
        bad: Any = None
        if revision >= "2025-11-25":
            bad = await session.call_tool("forecast", {"place": {"city": 3}, "day": "2025-01-01"})

    structured = revision >= "2025-06-18"
    assert (tools["forecast"].output_schema is not None) is structured
    assert (tools["forecast"].title == "Forecast") is structured
    assert forecast.is_error is False
    assert forecast.content[0].text == (  # type: ignore[union-attr]
        '{"place":{"city":"Lyon","country":"FR"},"day":"2025-07-14",'
        '"temperature":21.5,"unit":"fahrenheit"}'
    )
    if structured:
        # The SDK has checked these against the outputSchema it listed.
        assert forecast.structured_content == FORECAST
        assert stats.structured_content == {"count": 3, "mean": 6.5 / 3}
        assert added.structured_content == {"result": 5}
    else:
        assert forecast.structured_content is None
        assert tools["forecast"].annotations is not None or revision < "2025-03-26"
    assert added.content[0].text == "5"  # type: ignore[union-attr]
    assert chart.content[0].type == "image"
    if bad is not None:
        assert bad.is_error is True
        assert "place.city: Input should be a valid string" in bad.content[0].text
