"""What tools return, as a client receives it: content, helpers, structured output, revisions."""

from __future__ import annotations

import base64
import dataclasses
import datetime
from pathlib import Path
from typing import Any, TypedDict

import pytest
from pydantic import BaseModel

from mcpkit import Client, Server
from mcpkit.server.content import Audio, File, Image, ResourceLink
from mcpkit.testing import call, tools_by_name
from mcpkit.types import CallToolResult, EmbeddedResource, TextContent, TextResourceContents

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8
WAV = b"RIFF\x24\x00\x00\x00WAVEfmt "


class Weather(BaseModel):
    city: str
    celsius: float
    observed: datetime.date


@dataclasses.dataclass
class Reading:
    sensor: str
    value: float


class Totals(TypedDict):
    count: int
    names: list[str]


def returning(value: Any) -> Any:
    return lambda: value


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


# -- unstructured ------------------------------------------------------------------------------


async def test_plain_values_become_text() -> None:
    server = Server("plain")
    weather = Weather(city="Oslo", celsius=-3.5, observed=datetime.date(2025, 1, 2))
    values: dict[str, Any] = {
        "string": "hi",
        "number": 2.5,
        "flag": True,
        "mapping": {"a": 1},
        "model": weather,
        "data": Reading("t1", 20.5),
        "nothing": None,
        "items": ["one", 2, {"three": 3}],
    }
    for name, value in values.items():
        server.add_tool(returning(value), name=name)

    async with Client(server) as client:
        results = {name: await call(client, name) for name in values}
        tools = await tools_by_name(client)

    def texts(name: str) -> list[str]:
        assert results[name]["isError"] is False
        assert "structuredContent" not in results[name]
        return [block["text"] for block in results[name]["content"]]

    assert texts("string") == ["hi"]
    assert texts("number") == ["2.5"]
    assert texts("flag") == ["true"]
    assert texts("mapping") == ['{"a":1}']
    assert texts("model") == ['{"city":"Oslo","celsius":-3.5,"observed":"2025-01-02"}']
    assert texts("data") == ['{"sensor":"t1","value":20.5}']
    assert texts("nothing") == []
    assert texts("items") == ["one", "2", '{"three":3}']
    assert all("outputSchema" not in tool for tool in tools.values())


async def test_image_audio_file_and_link_helpers(tmp_path: Path) -> None:
    (tmp_path / "chart.png").write_bytes(PNG)
    (tmp_path / "notes.md").write_text("# Notes\nhé", encoding="utf-8")
    (tmp_path / "blob.bin").write_bytes(b"\x00\xff")
    server = Server("media")

    @server.tool()
    def media() -> list[Any]:
        return [
            "Here:",
            Image(PNG),  # sniffed
            Image(path=tmp_path / "chart.png", annotations={"audience": ["user"]}),
            Audio(WAV),
            Audio(b"raw", mime_type="audio/L16"),
            File(path=tmp_path / "notes.md"),
            File(path=tmp_path / "blob.bin"),
            File(b'{"a": 1}', name="data.json"),
            File("plain words", uri="memo://1", mime_type="text/plain"),
            ResourceLink("file:///project/main.rs", mime_type="text/x-rust", size=12),
        ]

    async with Client(server) as client:
        result = await call(client, "media")
        typed = await client.call_tool("media")  # the client's model accepts every block

    content = result["content"]
    assert content[0] == {"type": "text", "text": "Here:"}
    assert content[1] == {"type": "image", "data": b64(PNG), "mimeType": "image/png"}
    assert content[2]["mimeType"] == "image/png"
    assert content[2]["annotations"] == {"audience": ["user"]}
    assert content[3] == {"type": "audio", "data": b64(WAV), "mimeType": "audio/wav"}
    assert content[4]["mimeType"] == "audio/L16"
    notes = content[5]["resource"]
    assert content[5]["type"] == "resource"
    assert notes["uri"] == (tmp_path / "notes.md").resolve().as_uri()
    assert notes["mimeType"] == "text/markdown"
    assert notes["text"] == "# Notes\nhé"
    blob = content[6]["resource"]
    assert blob["blob"] == b64(b"\x00\xff")
    assert "text" not in blob
    assert content[7]["resource"] == {
        "uri": "file:///data.json",
        "mimeType": "application/json",
        "text": '{"a": 1}',
    }
    assert content[8]["resource"] == {
        "uri": "memo://1",
        "mimeType": "text/plain",
        "text": "plain words",
    }
    assert content[9] == {
        "type": "resource_link",
        "uri": "file:///project/main.rs",
        "name": "main.rs",
        "mimeType": "text/x-rust",
        "size": 12,
    }
    assert len(typed.content) == 10


def test_helpers_refuse_what_they_cannot_describe(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="cannot tell the type of this image"):
        Image(b"not an image")
    with pytest.raises(ValueError, match="either data or path"):
        Image(PNG, path=tmp_path / "x.png")
    with pytest.raises(ValueError, match="needs a name or a uri"):
        File(b"data")
    with pytest.raises(OSError):
        File(path=tmp_path / "missing.txt")
    assert File(b"\x01", name="x").mime_type == "application/octet-stream"
    (tmp_path / "photo.bin").write_bytes(PNG)
    assert Image(path=tmp_path / "photo.bin").mime_type == "image/png"  # sniffed, not guessed
    (tmp_path / "photo.jpg").write_bytes(PNG)
    assert Image(path=tmp_path / "photo.jpg").mime_type == "image/jpeg"  # the suffix wins


async def test_a_failing_helper_is_a_tool_error(tmp_path: Path) -> None:
    server = Server("media")

    @server.tool()
    def missing() -> Image:
        return Image(path=tmp_path / "gone.png")

    async with Client(server) as client:
        result = await call(client, "missing")
    assert result["isError"] is True
    assert "gone.png" in result["content"][0]["text"]


async def test_content_blocks_and_full_results_pass_through_unchanged() -> None:
    server = Server("passthrough")
    embedded = {"type": "resource", "resource": {"uri": "memo://1", "text": "hello"}}
    full = {"content": [{"type": "text", "text": "done"}], "isError": True, "_meta": {"k": 1}}
    model = CallToolResult(content=[TextContent(type="text", text="from a model")])

    server.add_tool(lambda: embedded, name="block")
    server.add_tool(lambda: [embedded, "and text"], name="blocks")
    server.add_tool(lambda: full, name="full")
    server.add_tool(lambda: model, name="model")
    server.add_tool(
        lambda: EmbeddedResource(
            type="resource", resource=TextResourceContents(uri="memo://2", text="typed")
        ),
        name="typed_block",
    )
    # A dict that merely has a "content" key is data, not a result.
    server.add_tool(lambda: {"title": "Doc", "content": "body"}, name="document")

    async with Client(server) as client:
        assert (await call(client, "block"))["content"] == [embedded]
        assert (await call(client, "blocks"))["content"] == [
            embedded,
            {"type": "text", "text": "and text"},
        ]
        assert await call(client, "full") == full
        assert await call(client, "model") == {
            "content": [{"type": "text", "text": "from a model"}]
        }
        typed_block = (await call(client, "typed_block"))["content"]
        assert typed_block == [
            {"type": "resource", "resource": {"uri": "memo://2", "text": "typed"}}
        ]
        document = await call(client, "document")
        assert document["content"] == [{"type": "text", "text": '{"title":"Doc","content":"body"}'}]


# -- structured output -------------------------------------------------------------------------


def structured_server() -> Server:
    server = Server("structured")

    @server.tool()
    def weather(city: str) -> Weather:
        return Weather(city=city, celsius=21.5, observed=datetime.date(2025, 6, 1))

    @server.tool()
    def reading() -> Reading:
        return Reading("t1", 20.5)

    @server.tool()
    def totals() -> Totals:
        return {"count": 2, "names": ["a", "b"]}

    @server.tool()
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool()
    def scores() -> dict[str, float]:
        return {"ada": 1.5}

    @server.tool()
    def history() -> list[Weather]:
        return [Weather(city="Oslo", celsius=1, observed=datetime.date(2025, 1, 1))]

    @server.tool()
    def greeting(who: str) -> str:
        return f"hello {who}"

    def forced() -> str:
        return "forced"

    def unwanted() -> int:
        return 5

    server.add_tool(forced, structured_output=True)
    server.add_tool(unwanted, structured_output=False)
    return server


async def test_return_annotations_give_output_schemas() -> None:
    async with Client(structured_server()) as client:
        tools = await tools_by_name(client)
        listed = await client.list_tools()  # the client's models accept the definitions

    assert len(listed.tools) == len(tools)
    weather = tools["weather"]["outputSchema"]
    assert weather["type"] == "object"
    assert weather["required"] == ["city", "celsius", "observed"]
    assert weather["properties"]["observed"] == {"type": "string", "format": "date"}
    assert tools["reading"]["outputSchema"]["properties"] == {
        "sensor": {"type": "string"},
        "value": {"type": "number"},
    }
    assert tools["totals"]["outputSchema"]["required"] == ["count", "names"]
    assert tools["add"]["outputSchema"] == {
        "type": "object",
        "properties": {"result": {"type": "integer"}},
        "required": ["result"],
    }
    assert tools["scores"]["outputSchema"] == {
        "type": "object",
        "additionalProperties": {"type": "number"},
    }
    history = tools["history"]["outputSchema"]
    assert history["properties"]["result"] == {
        "type": "array",
        "items": {"$ref": "#/$defs/Weather"},
    }
    assert "Weather" in history["$defs"]
    # A string is text already; forced, it is wrapped like any other value.
    assert "outputSchema" not in tools["greeting"]
    assert tools["forced"]["outputSchema"]["properties"] == {"result": {"type": "string"}}
    assert "outputSchema" not in tools["unwanted"]


async def test_structured_content_with_a_json_rendering() -> None:
    async with Client(structured_server()) as client:
        results = {
            name: await call(client, name, **arguments)
            for name, arguments in {
                "weather": {"city": "Rome"},
                "reading": {},
                "totals": {},
                "add": {"a": 2, "b": 3},
                "scores": {},
                "history": {},
                "greeting": {"who": "Ada"},
                "forced": {},
                "unwanted": {},
            }.items()
        }

    def structured(name: str) -> Any:
        result = results[name]
        assert result["isError"] is False
        return result["structuredContent"], result["content"][0]["text"]

    assert structured("weather") == (
        {"city": "Rome", "celsius": 21.5, "observed": "2025-06-01"},
        '{"city":"Rome","celsius":21.5,"observed":"2025-06-01"}',
    )
    assert structured("reading") == (
        {"sensor": "t1", "value": 20.5},
        '{"sensor":"t1","value":20.5}',
    )
    assert structured("totals") == (
        {"count": 2, "names": ["a", "b"]},
        '{"count":2,"names":["a","b"]}',
    )
    assert structured("add") == ({"result": 5}, "5")
    assert structured("scores") == ({"ada": 1.5}, '{"ada":1.5}')
    assert structured("history")[0] == {
        "result": [{"city": "Oslo", "celsius": 1.0, "observed": "2025-01-01"}]
    }
    assert structured("forced") == ({"result": "forced"}, "forced")
    assert results["greeting"] == {
        "content": [{"type": "text", "text": "hello Ada"}],
        "isError": False,
    }
    assert "structuredContent" not in results["unwanted"]


async def test_output_that_breaks_its_schema_is_a_tool_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = Server("liar")

    @server.tool()
    def count() -> int:
        return "many"  # type: ignore[return-value]

    @server.tool()
    def weather() -> Weather:
        return {"city": "Rome", "celsius": "warm"}  # type: ignore[return-value]

    @server.tool()
    def built() -> CallToolResult:
        return CallToolResult(content=[], structured_content={"anything": 1})

    @server.tool()
    def accepted() -> Weather:
        return {"city": "Rome", "celsius": 20, "observed": "2025-01-01"}  # type: ignore[return-value]

    async with Client(server) as client:
        counted = await call(client, "count")
        described = await call(client, "weather")
        passthrough = await call(client, "built")
        fine = await call(client, "accepted")

    assert counted["isError"] is True
    assert "structuredContent" not in counted
    assert counted["content"][0]["text"] == (
        "Tool count returned a value that does not match its output schema: "
        "result: expected integer, got str"
    )
    message = described["content"][0]["text"]
    assert described["isError"] is True
    assert "celsius: Input should be a valid number" in message
    assert "observed: field required" in message
    assert passthrough["structuredContent"] == {"anything": 1}  # no schema promised
    assert fine["structuredContent"]["observed"] == "2025-01-01"
    assert any("does not match its outputSchema" in r.message for r in caplog.records)


async def test_a_prebuilt_result_is_checked_against_the_output_schema() -> None:
    server = Server("prebuilt")

    @server.tool()
    def good() -> int:
        return CallToolResult(  # type: ignore[return-value]
            content=[TextContent(type="text", text="7")], structured_content={"result": 7}
        )

    @server.tool()
    def bad() -> int:
        return CallToolResult(  # type: ignore[return-value]
            content=[TextContent(type="text", text="7")], structured_content={"result": "7"}
        )

    async with Client(server) as client:
        assert (await call(client, "good"))["structuredContent"] == {"result": 7}
        assert (await call(client, "bad"))["isError"] is True


# -- older revisions ---------------------------------------------------------------------------


def revision_server() -> Server:
    server = Server("revisions")

    @server.tool(title="Adder", annotations={"readOnlyHint": True})
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool()
    def linked() -> list[Any]:
        return [ResourceLink("memo://7", "Memo 7"), Audio(WAV), "text stays"]

    return server


READ_ONLY = {"readOnlyHint": True}
NEWER = {"name", "title", "inputSchema", "outputSchema", "annotations"}


@pytest.mark.parametrize(
    ("revision", "fields", "annotations"),
    [
        ("2024-11-05", {"name", "inputSchema"}, None),
        ("2025-03-26", {"name", "inputSchema", "annotations"}, {"title": "Adder", **READ_ONLY}),
        ("2025-06-18", NEWER, READ_ONLY),
        ("2025-11-25", NEWER, READ_ONLY),
    ],
)
async def test_definitions_and_results_follow_the_negotiated_revision(
    revision: str, fields: set[str], annotations: dict[str, Any] | None
) -> None:
    async with Client(revision_server(), protocol_version=revision) as client:
        tools = await tools_by_name(client)
        added = await call(client, "add", a=1, b=2)
        linked = await call(client, "linked")

    assert set(tools["add"]) == fields
    assert tools["add"].get("annotations") == annotations
    assert added["content"] == [{"type": "text", "text": "3"}]
    structured = revision >= "2025-06-18"
    assert ("structuredContent" in added) is structured
    kinds = [block["type"] for block in linked["content"]]
    if structured:
        assert kinds == ["resource_link", "audio", "text"]
    else:
        assert linked["content"][0] == {"type": "text", "text": "Resource: Memo 7 <memo://7>"}
        assert kinds == ["text", "text" if revision < "2025-03-26" else "audio", "text"]
