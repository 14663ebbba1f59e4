"""MCP Apps on the server: views and linked tools as every client reads them (ours at both
eras, the official SDK's and FastMCP's), the extension declared both ways, what is refused
at registration, and a broken view link stopping the server when it starts."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from mcpkit import Client, Server
from mcpkit.errors import ConnectionClosed
from mcpkit.server.apps import Csp, client_supports_apps
from mcpkit.server.context import Context
from mcpkit.testing import connect
from tests.peers import fastmcp_python

HERE = Path(__file__).parent
FIXTURE = HERE / "apps_fixture.py"
MIME = "text/html;profile=mcp-app"
EXTENSION = "io.modelcontextprotocol/ui"
ERAS = ["2025-11-25", "2026-07-28"]
DASHBOARD_UI = {
    "csp": {
        "connectDomains": ["https://api.weather.example", "wss://live.weather.example"],
        "resourceDomains": ["https://cdn.example"],
        "frameDomains": ["https://video.example"],
        "baseUriDomains": ["https://base.example"],
    },
    "permissions": {"camera": {}, "clipboardWrite": {}},
    "domain": "weather.apps.example",
    "prefersBorder": False,
}


def fixture_server() -> Server:
    """A fresh copy of tests/server/apps_fixture.py's server (its module state is its own)."""
    namespace: dict[str, Any] = {"__name__": "apps_fixture"}
    exec(compile(FIXTURE.read_text(), str(FIXTURE), "exec"), namespace)
    server: Server = namespace["server"]
    return server


def at(server: Server, era: str, **options: Any) -> Any:
    """An in-process client of `server` speaking `era` (a handshake or the per-request one)."""
    if era == "2026-07-28":
        return connect(server, era=era, **options)
    return connect(server, protocol_version=era, **options)


# -- what clients read ------------------------------------------------------------------------


@pytest.mark.parametrize("era", ["2024-11-05", "2025-03-26", *ERAS])
async def test_views_and_linked_tools_at_both_eras(era: str) -> None:
    """At every revision: those without tool `_meta` still get its MCP Apps keys (a host
    must see `visibility` to keep an app-only tool from its model)."""
    async with at(fixture_server(), era) as client:
        assert client.protocol_version == era
        assert client.server_capabilities["extensions"] == {EXTENSION: {}}
        tools = {t.name: t.meta for t in (await client.list_tools()).tools}
        assert tools["forecast"] == {
            "ui": {"resourceUri": "ui://weather/dashboard", "visibility": ["model", "app"]},
            "ui/resourceUri": "ui://weather/dashboard",
        }
        assert tools["refresh"] == {"ui": {"visibility": ["app"]}}
        (listed,) = (await client.list_resources()).resources
        assert (listed.uri, listed.mime_type, listed.name) == (
            "ui://weather/dashboard",
            MIME,
            "dashboard",
        )
        assert listed.description == "The weather dashboard."
        assert listed.meta == {"ui": DASHBOARD_UI}
        (item,) = (await client.read_resource("ui://weather/dashboard")).to_wire()["contents"]
        assert item["mimeType"] == MIME and item["text"].startswith("<!DOCTYPE html>")
        assert item["_meta"] == {"ui": DASHBOARD_UI}
        # The text fallback of hosts without Apps.
        result = await client.call_tool("forecast", {"city": "Oslo"})
        assert result.content[0].text == "sunny in Oslo"  # type: ignore[union-attr]


async def test_a_server_without_views_declares_no_extension() -> None:
    server = Server("plain")

    @server.tool()
    def echo(text: str) -> str:
        return text

    for era in ERAS:
        async with at(server, era) as client:
            assert "extensions" not in client.server_capabilities


@pytest.mark.parametrize("era", ERAS)
async def test_the_client_declares_the_extension_when_asked(era: str) -> None:
    server = Server("probe")

    @server.tool()
    def probe(ctx: Context) -> str:
        extensions = ctx.client_capabilities.get("extensions") or {}
        return json.dumps([client_supports_apps(ctx), extensions.get(EXTENSION)])

    for apps, expected in ((True, [True, {"mimeTypes": [MIME]}]), (False, [False, None])):
        async with at(server, era, apps=apps) as client:
            assert client.protocol_version == era
            result = await client.call_tool("probe", {})
            assert json.loads(result.content[0].text) == expected  # type: ignore[union-attr]


async def test_a_file_view_is_read_again_at_each_read(tmp_path: Path) -> None:
    page = tmp_path / "view.html"
    page.write_text("<p>one</p>")
    server = Server("files")
    server.add_app("ui://files/view", page, prefers_border=True)
    async with connect(server) as client:
        first = await client.read_resource("ui://files/view")
        page.write_text("<p>two</p>")
        second = await client.read_resource("ui://files/view")
    texts = [r.to_wire()["contents"][0]["text"] for r in (first, second)]
    assert texts == ["<p>one</p>", "<p>two</p>"]
    assert second.to_wire()["contents"][0]["_meta"] == {"ui": {"prefersBorder": True}}


async def test_an_async_view_with_a_context_and_text_content() -> None:
    server = Server("views")

    @server.app("ui://views/hello", title="Hello")
    async def hello(ctx: Context) -> str:
        return f"<p>{ctx.protocol_version}</p>"

    server.add_app("ui://views/static", "<p>static</p>", name="fixed")
    async with at(server, "2026-07-28") as client:
        read = await client.read_resource("ui://views/hello")
        listed = {r.uri: r for r in (await client.list_resources()).resources}
    (item,) = read.to_wire()["contents"]
    assert item == {
        "uri": "ui://views/hello",
        "mimeType": MIME,
        "text": "<p>2026-07-28</p>",
        "_meta": {"ui": {}},
    }
    assert listed["ui://views/hello"].title == "Hello"
    assert (listed["ui://views/static"].name, listed["ui://views/static"].size) == ("fixed", 13)


async def test_a_mounted_servers_tool_links_its_view_under_the_prefix() -> None:
    parent = Server("parent")
    parent.mount(fixture_server(), prefix="kid")
    async with connect(parent) as client:
        tools = {t.name: t.meta for t in (await client.list_tools()).tools}
        link = tools["kid_forecast"]["ui"]["resourceUri"]  # type: ignore[index]
        assert link == "ui://kid/weather/dashboard"
        assert tools["kid_forecast"]["ui/resourceUri"] == link  # type: ignore[index]
        read = await client.read_resource(link)
    assert read.to_wire()["contents"][0]["mimeType"] == MIME


# -- refused at registration ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("uri", "options", "error", "match"),
    [
        ("https://weather/view", {}, ValueError, "ui:// scheme"),
        ("ui://", {}, ValueError, "ui:// scheme"),
        ("ui://weather/{day}", {}, ValueError, "not a template"),
        (
            "ui://w/v",
            {"csp": {"connect_domains": ["https://a.example; script-src *"]}},
            ValueError,
            "not one origin",
        ),
        ("ui://w/v", {"csp": {"connectDomains": ["https://a https://b"]}}, ValueError, "origin"),
        ("ui://w/v", {"csp": Csp(resource_domains="https://cdn")}, ValueError, "list of origins"),
        ("ui://w/v", {"csp": {"script_domains": []}}, ValueError, "unknown csp key"),
        ("ui://w/v", {"permissions": ["camera", "usb"]}, ValueError, "unknown app permission"),
        ("ui://w/v", {"domain": "a.example; x"}, ValueError, "one host name"),
        ("ui://w/v", {"prefers_border": "yes"}, TypeError, "prefers_border"),
        ("ui://w/v", {"meta": {"ui": {}}}, ValueError, "_meta.ui"),
        ("ui://w/v", {"colour": "red"}, TypeError, "unknown option"),
    ],
)
def test_a_bad_view_is_refused(
    uri: str, options: dict[str, Any], error: type[Exception], match: str
) -> None:
    server = Server("bad")
    with pytest.raises(error, match=match):
        server.add_app(uri, "<p>x</p>", **options)
    assert len(server.resources) == 0


def test_a_view_source_must_be_html_a_file_or_a_function(tmp_path: Path) -> None:
    server = Server("bad")
    with pytest.raises(TypeError, match="HTML text, a file path or a function"):
        server.add_app("ui://bad/view", 42)  # type: ignore[call-overload]
    with pytest.raises(FileNotFoundError, match="no file"):
        server.add_app("ui://bad/view", tmp_path / "missing.html")
    server.add_app("ui://bad/view", "<p>x</p>")
    with pytest.raises(ValueError, match="already registered"):
        server.add_app("ui://bad/view", "<p>y</p>")
    server.add_app("ui://bad/view", "<p>y</p>", replace=True)


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"app": "https://weather/view"}, "ui:// scheme"),
        ({"app": "ui://weather/{day}"}, "not a template"),
        ({"visibility": []}, "visibility"),
        ({"visibility": ["model", "user"]}, "visibility"),
        ({"app": "ui://w/v", "meta": {"ui": {"resourceUri": "ui://w/other"}}}, "meta"),
    ],
)
def test_a_bad_tool_link_is_refused(options: dict[str, Any], match: str) -> None:
    server = Server("bad")

    def tool() -> str:
        return "x"

    with pytest.raises(ValueError, match=match):
        server.add_tool(tool, **options)
    assert len(server.tools) == 0


# -- refused at start -------------------------------------------------------------------------


def test_any_ui_resource_is_served_as_a_view_or_refused() -> None:
    server = Server("plain")
    assert server.add_resource("ui://plain/a", "<p>a</p>").definition["mimeType"] == MIME

    @server.resource("ui://plain/b")
    def b() -> str:
        return "<p>b</p>"

    listed = server.resources.registry("resource").get("ui://plain/b")
    assert listed is not None and listed.definition["mimeType"] == MIME
    with pytest.raises(ValueError, match="ui:// resources are MCP Apps views"):
        server.add_resource("ui://plain/c", "<p>c</p>", mime_type="text/html")
    with pytest.raises(ValueError, match="ui:// resources are MCP Apps views"):
        server.add_resource("ui://plain/d", b, mime_type="text/plain")


def broken_server() -> Server:
    server = Server("broken")
    server.add_resource("data://broken/page", "<p>x</p>", mime_type="text/html")

    @server.tool(app="ui://broken/missing")
    def first() -> str:
        return "x"

    @server.tool(meta={"ui": {"resourceUri": "data://broken/page"}})  # linked by hand
    def second() -> str:
        return "x"

    return server


def test_a_broken_view_link_stops_the_server_before_it_listens() -> None:
    with pytest.raises(ValueError) as caught:
        broken_server().http_app()
    message = str(caught.value)
    assert "tool 'first' renders in 'ui://broken/missing', but no view is registered" in message
    assert (
        "tool 'second' renders in 'data://broken/page', which is served as 'text/html'" in message
    )


async def test_an_in_process_client_of_a_broken_server_is_told_why_at_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = broken_server()
    with pytest.raises(ConnectionClosed) as caught:
        async with Client(server, timeout=30):
            pass
    assert "the in-process server stopped: ValueError" in str(caught.value)
    assert "tool 'first' renders in 'ui://broken/missing'" in str(caught.value)
    gc.collect()  # an unread task error is logged when the task is collected
    assert "never retrieved" not in caplog.text


def test_a_broken_stdio_server_exits_naming_the_link(tmp_path: Path) -> None:
    script = tmp_path / "broken.py"
    script.write_text(
        "from mcpkit import Server\n"
        "server = Server('broken')\n"
        "@server.tool(app='ui://broken/missing')\n"
        "def first() -> str:\n"
        "    return 'x'\n"
        "server.run()\n"
    )
    done = subprocess.run(
        [sys.executable, str(script)], input=b"", capture_output=True, timeout=60, check=False
    )
    assert done.returncode != 0
    assert b"tool 'first' renders in 'ui://broken/missing'" in done.stderr


async def test_a_tool_added_while_serving_needs_its_view_now() -> None:
    server = Server("live")
    server.add_app("ui://live/view", "<p>x</p>")

    def late() -> str:
        return "x"

    async with connect(server):
        with pytest.raises(ValueError, match="no view is registered"):
            server.add_tool(late, app="ui://live/nowhere")
        server.add_tool(late, app="ui://live/view")
    assert "late" in server.tools


# -- other implementations' clients ----------------------------------------------------------


@pytest.mark.interop
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_official_client_reads_our_metadata_as_sent(mode: str) -> None:
    mcp = pytest.importorskip("mcp", reason="the official SDK is a dev dependency")
    from mcp import StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=sys.executable, args=[str(FIXTURE)])
    with tempfile.TemporaryFile("w+") as errlog:
        async with mcp.Client(stdio_client(params, errlog=errlog), mode=mode) as client:
            era = "2026-07-28" if mode == "auto" else "2025-11-25"
            assert client.protocol_version == era
            session = client.session
            declared = (session.discover_result or session.initialize_result).capabilities
            assert declared.extensions == {EXTENSION: {}}
            tools = {t.name: t.meta for t in (await client.list_tools()).tools}
            resources = (await client.list_resources()).resources
            read = await client.read_resource("ui://weather/dashboard")
    assert tools["forecast"]["ui"] == {  # type: ignore[index]
        "resourceUri": "ui://weather/dashboard",
        "visibility": ["model", "app"],
    }
    assert tools["refresh"] == {"ui": {"visibility": ["app"]}}
    (resource,) = resources
    assert (resource.mime_type, resource.meta) == (MIME, {"ui": DASHBOARD_UI})
    (item,) = read.contents
    assert (item.mime_type, item.meta) == (MIME, {"ui": DASHBOARD_UI})


@pytest.mark.interop
def test_fastmcp_reads_our_app_metadata_with_its_own_models() -> None:
    script = HERE / "fastmcp_apps_client.py"
    done = subprocess.run(
        [str(fastmcp_python()), str(script), sys.executable, str(FIXTURE)],
        capture_output=True,
        timeout=120,
        check=True,
    )
    seen = json.loads(done.stdout.decode().strip().splitlines()[-1])
    assert seen["tools"] == {
        "forecast": {"resourceUri": "ui://weather/dashboard", "visibility": ["model", "app"]},
        "refresh": {"visibility": ["app"]},
    }
    dashboard = seen["resources"]["ui://weather/dashboard"]
    assert dashboard["listed"] == DASHBOARD_UI and dashboard["read"] == DASHBOARD_UI
    assert dashboard["is_app"] and seen["fallback"] == "sunny in Paris"


@pytest.mark.interop
async def test_the_official_client_at_2024_11_05_sees_visibility(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The Apps text negotiates at 2024-11-05 too: a revision without tool `_meta` still
    carries the Apps keys, and the SDK's validation of that revision accepts them."""
    pytest.importorskip("mcp", reason="the official SDK is a dev dependency")
    import mcp.client.session as official_session
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    monkeypatch.setattr(official_session, "LATEST_HANDSHAKE_VERSION", "2024-11-05")
    params = StdioServerParameters(command=sys.executable, args=[str(FIXTURE)])
    with tempfile.TemporaryFile("w+") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            initialized = await session.initialize()
            tools = {t.name: t.meta for t in (await session.list_tools()).tools}
    assert initialized.protocol_version == "2024-11-05"
    assert initialized.capabilities.extensions == {EXTENSION: {}}
    assert tools["refresh"] == {"ui": {"visibility": ["app"]}}
