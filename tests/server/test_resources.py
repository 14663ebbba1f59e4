"""Resources seen from connected clients: static, function-backed, templates, errors,
list_changed, subscriptions."""

from __future__ import annotations

import asyncio
import base64
import enum
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

import pytest

from mcpkit import Client, Server
from mcpkit.errors import CapabilityNotDeclared, ProtocolError, resource_not_found_code
from mcpkit.server.context import Context, SessionState
from mcpkit.server.resources import ResourceContents, ResourceNotFound

from .peer import Peer, connect


@dataclass
class FakeContext:
    """Just enough of a Context to call registry methods at a revision no transport speaks."""

    protocol_version: str | None
    params: dict[str, Any]
    state: SessionState
    principal: Any = None


async def read_error(client: Client | Peer, uri: Any) -> ProtocolError:
    with pytest.raises(ProtocolError) as caught:
        await client.request("resources/read", {"uri": uri})
    return caught.value


def only(result: dict[str, Any]) -> dict[str, Any]:
    [contents] = result["contents"]
    return contents  # type: ignore[no-any-return]


# -- static resources ------------------------------------------------------------------------------


async def test_static_text_and_binary_resources() -> None:
    server = Server("s")
    png = b"\x89PNG\r\n\x1a\n\x00\xff"
    server.add_resource("file:///docs/readme.md", "# Hi", mime_type="text/markdown")
    server.add_resource("memo://today", "héllo")
    server.add_resource("image://logo", png, mime_type="image/png", title="Logo")
    async with Client(server) as client:
        assert client.server_capabilities["resources"] == {"subscribe": True, "listChanged": True}
        listed = await client.request("resources/list")
        assert listed["resources"] == [
            {
                "uri": "file:///docs/readme.md",
                "name": "readme.md",
                "mimeType": "text/markdown",
                "size": 4,
            },
            {"uri": "memo://today", "name": "today", "mimeType": "text/plain", "size": 6},
            {
                "uri": "image://logo",
                "name": "logo",
                "title": "Logo",
                "mimeType": "image/png",
                "size": len(png),
            },
        ]
        assert "nextCursor" not in listed
        text = only(await client.request("resources/read", {"uri": "memo://today"}))
        assert text == {"uri": "memo://today", "mimeType": "text/plain", "text": "héllo"}
        blob = only(await client.request("resources/read", {"uri": "image://logo"}))
        assert blob["mimeType"] == "image/png" and "text" not in blob
        assert base64.b64decode(blob["blob"]) == png


def test_static_content_must_be_text_or_bytes() -> None:
    server = Server("s")
    with pytest.raises(TypeError):
        server.add_resource("x://a", 42)  # type: ignore[call-overload]
    with pytest.raises(ValueError, match="concrete URI"):
        server.add_resource("x://{a}", "text")
    server.add_resource("x://a", "one")
    with pytest.raises(ValueError, match="already registered"):
        server.add_resource("x://a", "two")
    server.add_resource("x://a", "two", replace=True)


# -- function-backed resources ---------------------------------------------------------------------


async def test_functions_return_text_blobs_json_and_full_contents() -> None:
    server = Server("s")

    @server.resource("config://app")
    def config() -> dict[str, Any]:
        """The app's configuration.

        More text that is not part of the summary.
        """
        return {"debug": True, "name": "app"}

    @server.resource("config://list", name="flags")
    async def flag_list() -> list[str]:
        return ["a", "b"]

    @server.resource("text://async")
    async def async_text() -> str:
        await asyncio.sleep(0)
        return "from a coroutine"

    @server.resource("bin://raw", mime_type="application/x-thing")
    def raw() -> bytes:
        return b"\x00\x01\x02"

    @server.resource("multi://both", mime_type="text/csv")
    def both() -> list[ResourceContents]:
        return [
            ResourceContents("a,b\n1,2\n"),
            ResourceContents(b"\x01", mime_type="application/zip", uri="multi://both.zip"),
        ]

    async with Client(server) as client:
        listed = {r["uri"]: r for r in (await client.request("resources/list"))["resources"]}
        assert listed["config://app"] == {
            "uri": "config://app",
            "name": "config",
            "description": "The app's configuration.",
            "mimeType": "application/json",
        }
        assert listed["config://list"]["name"] == "flags"
        assert listed["text://async"]["mimeType"] == "text/plain"
        assert listed["bin://raw"]["mimeType"] == "application/x-thing"

        app = only(await client.request("resources/read", {"uri": "config://app"}))
        assert app == {
            "uri": "config://app",
            "mimeType": "application/json",
            "text": '{"debug":true,"name":"app"}',
        }
        flags = only(await client.request("resources/read", {"uri": "config://list"}))
        assert flags["text"] == '["a","b"]' and flags["mimeType"] == "application/json"
        text = only(await client.request("resources/read", {"uri": "text://async"}))
        assert text["text"] == "from a coroutine"
        blob = only(await client.request("resources/read", {"uri": "bin://raw"}))
        assert blob == {"uri": "bin://raw", "mimeType": "application/x-thing", "blob": "AAEC"}
        many = await client.request("resources/read", {"uri": "multi://both"})
        assert many["contents"] == [
            {"uri": "multi://both", "mimeType": "text/csv", "text": "a,b\n1,2\n"},
            {"uri": "multi://both.zip", "mimeType": "application/zip", "blob": "AQ=="},
        ]


async def test_protocol_models_pass_through() -> None:
    from mcpkit.types import BlobResourceContents, ReadResourceResult, TextResourceContents

    server = Server("s")

    @server.resource("model://one")
    def one() -> TextResourceContents:
        return TextResourceContents(uri="model://one", text="t", mime_type="text/x-a")

    @server.resource("model://whole")
    def whole() -> ReadResourceResult:
        blob = BlobResourceContents(uri="model://whole", blob="AA==")
        return ReadResourceResult(contents=[blob])

    async with Client(server) as client:
        assert only(await client.request("resources/read", {"uri": "model://one"})) == {
            "uri": "model://one",
            "mimeType": "text/x-a",
            "text": "t",
        }
        whole_result = await client.request("resources/read", {"uri": "model://whole"})
        assert whole_result == {"contents": [{"uri": "model://whole", "blob": "AA=="}]}


async def test_listing_metadata_annotations_icons_meta() -> None:
    server = Server("s")
    modified = datetime(2025, 1, 12, 15, 0, 58, tzinfo=UTC)

    @server.resource(
        "doc://guide",
        title="The Guide",
        description="Read me first",
        mime_type="text/markdown",
        size=1234,
        annotations={"audience": ["user", "assistant"], "priority": 0.8, "lastModified": modified},
        icons=[{"src": "https://example.com/i.png", "mimeType": "image/png", "sizes": ["48x48"]}],
        meta={"example.com/owner": "docs"},
    )
    def guide() -> str:
        """Ignored: the description is given."""
        return "# Guide"

    @server.resource("doc://{section}", annotations={"priority": 1})
    def section(section: str) -> str:
        return section

    async with Client(server) as client:
        [listed] = (await client.request("resources/list"))["resources"]
        assert listed == {
            "uri": "doc://guide",
            "name": "guide",
            "title": "The Guide",
            "description": "Read me first",
            "mimeType": "text/markdown",
            "size": 1234,
            "annotations": {
                "audience": ["user", "assistant"],
                "priority": 0.8,
                "lastModified": "2025-01-12T15:00:58Z",
            },
            "icons": [
                {"src": "https://example.com/i.png", "mimeType": "image/png", "sizes": ["48x48"]}
            ],
            "_meta": {"example.com/owner": "docs"},
        }
        [template] = (await client.request("resources/templates/list"))["resourceTemplates"]
        assert template == {
            "uriTemplate": "doc://{section}",
            "name": "section",
            "mimeType": "text/plain",
            "annotations": {"priority": 1},
        }


@pytest.mark.parametrize(
    "options",
    [
        {"annotations": {"priority": 2}},
        {"annotations": {"priority": "high"}},
        {"annotations": {"audience": ["bot"]}},
        {"annotations": {"audience": "user"}},
        {"annotations": {"audiences": ["user"]}},
        {"annotations": {"lastModified": 20250112}},
        {"icons": [{"mimeType": "image/png"}]},
        {"size": -1},
    ],
)
def test_bad_listing_options_are_refused_at_registration(options: dict[str, Any]) -> None:
    server = Server("s")
    with pytest.raises(ValueError):
        server.add_resource("x://a", lambda: "a", **options)
    assert len(server.resources) == 0


# -- templates -------------------------------------------------------------------------------------


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


async def test_templates_match_with_typed_variables() -> None:
    server = Server("s")
    seen: list[Any] = []

    @server.resource("users://{id}/profile")
    def profile(id: int) -> dict[str, Any]:
        """A user's profile."""
        seen.append(id)
        return {"id": id, "type": type(id).__name__}

    @server.resource("repo://{owner}/{name}/tree{/path*}")
    def tree(owner: str, name: str, path: list[str]) -> str:
        return f"{owner}|{name}|{'/'.join(path)}|{len(path)}"

    @server.resource("search://items{?q,limit,exact,tags}")
    def search(
        q: str = "", limit: int = 10, exact: bool = False, tags: list[str] | None = None
    ) -> dict[str, Any]:
        return {"q": q, "limit": limit, "exact": exact, "tags": tags}

    @server.resource("paint://{color}/{shade}{.format}")
    def paint(color: Color, shade: float, format: Literal["png", "svg"] = "png") -> str:
        return f"{color.name} {shade} {format}"

    @server.resource("files://{+path}")
    def file(path: str) -> str:
        return path

    async with Client(server) as client:
        templates = (await client.request("resources/templates/list"))["resourceTemplates"]
        assert [t["uriTemplate"] for t in templates] == [
            "users://{id}/profile",
            "repo://{owner}/{name}/tree{/path*}",
            "search://items{?q,limit,exact,tags}",
            "paint://{color}/{shade}{.format}",
            "files://{+path}",
        ]
        assert templates[0]["description"] == "A user's profile."
        assert (await client.request("resources/list"))["resources"] == []

        async def text(uri: str) -> str:
            result = only(await client.request("resources/read", {"uri": uri}))
            assert result["uri"] == uri
            return str(result["text"])

        assert await text("users://42/profile") == '{"id":42,"type":"int"}'
        assert await text("users://-7/profile") == '{"id":-7,"type":"int"}'
        assert seen == [42, -7]
        assert await text("repo://me/kit/tree/src/a%20b/c.py") == "me|kit|src/a b/c.py|3"
        assert await text("repo://me/kit/tree") == "me|kit||0"
        assert await text("search://items") == '{"q":"","limit":10,"exact":false,"tags":null}'
        assert await text("search://items?limit=5&q=hello%20world&tags=a,b%2Cc&exact=true") == (
            '{"q":"hello world","limit":5,"exact":true,"tags":["a","b,c"]}'
        )
        assert await text("paint://green/0.25.svg") == "GREEN 0.25 svg"
        assert await text("paint://red/1") == "RED 1.0 png"
        assert await text("files://docs/guide%20one.md") == "docs/guide one.md"

        bad_int = await read_error(client, "users://abc/profile")
        assert bad_int.code == -32002 and bad_int.data == {"uri": "users://abc/profile"}
        assert "id: expected an integer" in bad_int.message
        assert (await read_error(client, "search://items?limit=many")).code == -32002
        assert (await read_error(client, "search://items?other=1")).code == -32002
        bad_enum = await read_error(client, "paint://blue/1")
        assert "color: expected one of 'red', 'green'" in bad_enum.message
        assert (await read_error(client, "paint://red/1.gif")).code == -32002
        assert seen == [42, -7]  # a URI that does not convert never reaches the function


@dataclass
class Point:
    x: int
    y: int


async def test_more_return_types_and_parameter_annotations() -> None:
    from pydantic import BaseModel

    class Profile(BaseModel):
        name: str
        tags: list[str]

    server = Server("s")

    @server.resource("point://{x}/{y}")
    def point(x: Annotated[int, "the x"], y: int) -> Point:
        return Point(x, y)

    @server.resource("profile://{name}")
    def profile(name: str) -> Profile:
        return Profile(name=name, tags=["a"])

    @server.resource("set://{+items}")
    def unique(items: tuple[int, ...]) -> set[int]:
        return set(items)

    @server.resource("lines://{lines}", mime_type="text/x-lines")
    def lines(lines: list[str]) -> str:
        return "\n".join(lines)

    async with Client(server) as client:
        templates = (await client.request("resources/templates/list"))["resourceTemplates"]
        assert [t.get("mimeType") for t in templates] == [
            "application/json",
            "application/json",
            None,
            "text/x-lines",
        ]
        assert (await client.request("resources/read", {"uri": "point://1/2"}))["contents"] == [
            {"uri": "point://1/2", "mimeType": "application/json", "text": '{"x":1,"y":2}'}
        ]
        assert only(await client.request("resources/read", {"uri": "profile://ada"}))["text"] == (
            '{"name":"ada","tags":["a"]}'
        )
        numbers = only(await client.request("resources/read", {"uri": "set://3,1,3"}))
        assert numbers == {"uri": "set://3,1,3", "mimeType": "application/json", "text": "[1,3]"}
        assert (await read_error(client, "set://1,x")).code == -32002
        text = only(await client.request("resources/read", {"uri": "lines://a,b%2Cc"}))
        assert text == {"uri": "lines://a,b%2Cc", "mimeType": "text/x-lines", "text": "a\nb,c"}


def test_template_variables_must_fit_the_parameters() -> None:
    server = Server("s")
    with pytest.raises(ValueError, match="'id' is not a parameter"):
        server.add_resource("users://{id}", lambda: "x")
    with pytest.raises(ValueError, match="'extra' is not a variable"):
        server.add_resource("users://{id}", lambda id, extra: "x")
    with pytest.raises(ValueError, match=r"annotate .* as a list"):

        def segments(path: int) -> str:
            return ""

        server.add_resource("p://x{/path*}", segments)
    with pytest.raises(ValueError):
        server.add_resource("bad://{unclosed", lambda unclosed: "x")
    with pytest.raises(ValueError, match="positional-only"):

        def positional(id: str, /) -> str:
            return id

        server.add_resource("users://{id}", positional)
    # **kwargs takes any variable, as matched; unannotated exploded variables are lists.
    server.add_resource("any://{a}{/rest*}", lambda rest, **more: "ok")
    assert len(server.resources) == 1


async def test_first_matching_template_wins_and_kwargs_get_strings() -> None:
    server = Server("s")

    @server.resource("n://{value}")
    def number(value: int) -> str:
        return f"int {value}"

    @server.resource("n://{word}")
    def word(**variables: Any) -> str:
        return f"word {variables}"

    async with Client(server) as client:
        assert only(await client.request("resources/read", {"uri": "n://5"}))["text"] == "int 5"
        assert (
            only(await client.request("resources/read", {"uri": "n://x"}))["text"]
            == "word {'word': 'x'}"
        )


async def test_context_parameter_and_reading_own_resources_from_a_tool() -> None:
    server = Server("s")
    server.add_resource("memo://a", "alpha")

    @server.resource("echo://{word}")
    def echo(word: str, ctx: Context) -> str:
        return f"{word} at {ctx.protocol_version}"

    @server.tool()
    async def combine(ctx: Context) -> str:
        first = await ctx.read_resource("memo://a")
        second = await ctx.read_resource("echo://hi")
        first.contents[0].text = "mutated"  # type: ignore[union-attr]  # a copy
        return second.contents[0].text  # type: ignore[union-attr]

    @server.tool()
    async def missing(ctx: Context) -> str:
        try:
            await ctx.read_resource("memo://nope")
        except ProtocolError as exc:
            return f"{exc.code} {exc.data}"
        return "found?"

    async with Client(server, protocol_version="2025-06-18") as client:
        result = await client.call_tool("combine")
        assert result.content[0].text == "hi at 2025-06-18"  # type: ignore[union-attr]
        assert only(await client.request("resources/read", {"uri": "memo://a"}))["text"] == "alpha"
        missing_result = await client.call_tool("missing")
        assert missing_result.content[0].text == "-32002 {'uri': 'memo://nope'}"  # type: ignore[union-attr]


# -- errors ----------------------------------------------------------------------------------------


async def test_not_found_uses_the_code_of_the_negotiated_revision() -> None:
    server = Server("s")
    server.add_resource("memo://a", "alpha")

    @server.resource("users://{id}")
    def user(id: int) -> str | None:
        return "ada" if id == 1 else None

    @server.resource("raises://{id}")
    async def raises(id: str) -> str:
        raise ResourceNotFound(f"no record {id}")

    for version in ("2024-11-05", "2025-06-18", "2025-11-25"):
        async with Client(server, protocol_version=version) as client:
            for uri in ("memo://b", "users://2", "raises://7", "other://x"):
                error = await read_error(client, uri)
                assert error.code == -32002, (version, uri)
                assert error.data == {"uri": uri}
                assert error.message.startswith(f"Resource not found: {uri}")
            assert "no record 7" in (await read_error(client, "raises://7")).message

    # 2026-07-28 names -32602; no transport here speaks it yet, so ask the registry directly.
    assert resource_not_found_code("2026-07-28") == -32602
    assert resource_not_found_code("2025-11-25") == -32002
    for version, code in (("2026-07-28", -32602), ("2025-06-18", -32002)):
        ctx: Any = FakeContext(version, {}, SessionState())
        with pytest.raises(ProtocolError) as caught:
            await server.resources.read("users://2", ctx)
        assert caught.value.code == code and caught.value.data == {"uri": "users://2"}


async def test_malformed_requests_and_failing_functions() -> None:
    server = Server("s")

    @server.resource("boom://x")
    def boom() -> str:
        raise RuntimeError("secret internals")

    @server.resource("weird://x")
    def weird() -> object:
        return object()

    async with Client(server) as client:
        for params in ({}, {"uri": 5}, {"uri": None}):
            with pytest.raises(ProtocolError) as caught:
                await client.request("resources/read", params)
            assert caught.value.code == -32602
        failure = await read_error(client, "boom://x")
        assert failure.code == -32603 and "secret" not in failure.message
        assert (await read_error(client, "weird://x")).code == -32603
        await client.ping()  # still fine


# -- list_changed, pagination, caching -------------------------------------------------------------


async def test_list_changed_when_resources_change_at_run_time() -> None:
    server = Server("s")
    server.add_resource("memo://a", "alpha")
    async with connect(server) as peer:
        server.add_resource("memo://b", "beta")
        assert await peer.next_notification("notifications/resources/list_changed") is None
        listed = await peer.request("resources/list")
        assert [r["uri"] for r in listed["resources"]] == ["memo://a", "memo://b"]

        server.resource("later://{x}")(lambda x: x)
        await peer.next_notification("notifications/resources/list_changed")
        templates = await peer.request("resources/templates/list")
        assert [t["uriTemplate"] for t in templates["resourceTemplates"]] == ["later://{x}"]

        server.remove_resource("memo://a")
        server.remove_resource("later://{x}")
        assert [m for m, _ in await peer.settle()] == ["notifications/resources/list_changed"] * 2
        assert (await peer.read("memo://b"))["contents"][0]["text"] == "beta"
        with pytest.raises(ProtocolError):
            await peer.read("memo://a")
        with pytest.raises(KeyError):
            server.remove_resource("memo://a")


async def test_list_pages_and_cached_answers() -> None:
    server = Server("s", page_size=2)
    for n in range(5):
        server.add_resource(f"memo://{n}", str(n))
    for n in range(3):
        server.add_resource(f"t{n}://{{x}}", lambda x: x, name=f"t{n}")
    async with Client(server) as client:
        uris: list[str] = []
        params: dict[str, Any] = {}
        pages = 0
        while True:
            page = await client.request("resources/list", params)
            uris += [r["uri"] for r in page["resources"]]
            pages += 1
            if "nextCursor" not in page:
                break
            params = {"cursor": page["nextCursor"]}
        assert uris == [f"memo://{n}" for n in range(5)] and pages == 3
        first = await client.request("resources/templates/list")
        assert len(first["resourceTemplates"]) == 2 and "nextCursor" in first
        with pytest.raises(ProtocolError) as forged:
            await client.request("resources/list", {"cursor": "forged"})
        assert forged.value.code == -32602

    # The same page is serialized once per registry version and reused.
    ctx: Any = FakeContext("2025-11-25", {}, SessionState())
    before = server.resources.list_resources(ctx)
    assert server.resources.list_resources(ctx) is before
    server.add_resource("memo://new", "n")
    assert server.resources.list_resources(ctx) is not before


# -- subscriptions ---------------------------------------------------------------------------------


async def test_updated_goes_only_to_subscribers() -> None:
    server = Server("s")
    server.add_resource("memo://a", "alpha")
    server.add_resource("memo://b", "beta")

    @server.resource("users://{id}/profile")
    def profile(id: int) -> str:
        return str(id)

    async with connect(server) as alice, connect(server) as bob:
        assert await alice.request("resources/subscribe", {"uri": "memo://a"}) == {}
        assert await bob.request("resources/subscribe", {"uri": "memo://b"}) == {}
        assert server.resources.notify_updated("memo://a") == 1
        assert await alice.next_notification("notifications/resources/updated") == {
            "uri": "memo://a"
        }
        assert await bob.settle() == []

        # Template-matched URIs: each subscriber hears of its own URI.
        await alice.request("resources/subscribe", {"uri": "users://1/profile"})
        await bob.request("resources/subscribe", {"uri": "users://2/profile"})
        assert server.resources.notify_updated("users://1/profile") == 1
        assert await alice.settle() == [
            ("notifications/resources/updated", {"uri": "users://1/profile"})
        ]
        assert await bob.settle() == []
        assert server.resources.notify_updated("users://{id}/profile") == 2
        assert await alice.settle() == [
            ("notifications/resources/updated", {"uri": "users://1/profile"})
        ]
        assert await bob.settle() == [
            ("notifications/resources/updated", {"uri": "users://2/profile"})
        ]

        # Unsubscribing stops them; unsubscribing twice is fine.
        assert await alice.request("resources/unsubscribe", {"uri": "memo://a"}) == {}
        assert await alice.request("resources/unsubscribe", {"uri": "memo://a"}) == {}
        assert server.resources.notify_updated("memo://a") == 0
        assert server.resources.notify_updated("memo://b") == 1
        assert await alice.settle() == []
        assert await bob.settle() == [("notifications/resources/updated", {"uri": "memo://b"})]
    # Gone clients are skipped.
    assert server.resources.notify_updated("memo://b") == 0


async def test_subscribe_checks_the_uri() -> None:
    server = Server("s")
    server.add_resource("memo://a", "alpha")
    server.add_resource("users://{id}", lambda id: f"user {id}")
    async with Client(server, protocol_version="2025-06-18") as client:
        with pytest.raises(ProtocolError) as unknown:
            await client.request("resources/subscribe", {"uri": "memo://zzz"})
        assert unknown.value.code == -32002 and unknown.value.data == {"uri": "memo://zzz"}
        with pytest.raises(ProtocolError) as missing:
            await client.request("resources/subscribe", {})
        assert missing.value.code == -32602
        # A template-matched URI can be subscribed before anyone reads it.
        assert await client.request("resources/subscribe", {"uri": "users://9"}) == {}


async def test_a_server_without_resources_declares_none() -> None:
    server = Server("s")
    async with Client(server) as client:
        assert "resources" not in client.server_capabilities
        with pytest.raises(CapabilityNotDeclared):
            await client.request("resources/list")


# -- completion choices ----------------------------------------------------------------------------


async def test_closed_set_variables_complete_on_their_own() -> None:
    server = Server("s")

    @server.resource("paint://{color}/{finish}/{name}")
    def paint(color: Color, finish: Literal["matte", "gloss", "metallic"], name: str) -> str:
        return name

    ref = {"type": "ref/resource", "uri": "paint://{color}/{finish}/{name}"}
    async with Client(server) as client:
        assert "completions" in client.server_capabilities

        async def complete(argument: str, value: str) -> list[str]:
            params = {"ref": ref, "argument": {"name": argument, "value": value}}
            result = await client.request("completion/complete", params)
            return list(result["completion"]["values"])

        assert await complete("finish", "m") == ["matte", "metallic"]
        assert await complete("color", "") == ["red", "green"]
        assert await complete("name", "a") == []  # a plain str has no closed set
