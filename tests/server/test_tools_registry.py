"""Tool definitions (names, annotations, icons, _meta), errors, threads and the Context."""

from __future__ import annotations

import asyncio
import functools
import subprocess
import sys
import threading
from typing import Any

import pytest

from mcpkit import Client, Server
from mcpkit.errors import ProtocolError
from mcpkit.server.context import Context
from mcpkit.server.tools import Tool
from mcpkit.testing import call, tools_by_name
from mcpkit.types import Icon, ToolAnnotations


def text(result: dict[str, Any]) -> str:
    return str(result["content"][0]["text"])


def noop() -> None:
    pass


# -- names -------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["getUser", "DATA_EXPORT_v2", "admin.tools.list", "a", "x" * 128])
def test_names_the_spec_allows(name: str) -> None:
    assert Tool(noop, name=name).name == name


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("", "it is empty"),
        ("x" * 129, "it is 129 characters long (at most 128)"),
        ("get user", "it contains ' '"),
        ("a,b/c", "it contains ',', '/'"),
        ("café", "it contains 'é'"),
    ],
)
def test_names_the_spec_advises_against_are_refused(name: str, problem: str) -> None:
    server = Server("names")
    with pytest.raises(ValueError, match="invalid tool name") as caught:
        server.add_tool(noop, name=name)
    assert problem in str(caught.value)
    assert "A-Z a-z 0-9 _ - ." in str(caught.value)
    assert len(server.tools) == 0


def test_a_lambda_needs_a_name() -> None:
    with pytest.raises(ValueError, match=r"'<lambda>'.*pass name="):
        Server("names").add_tool(lambda: None)


def test_a_taken_name_is_refused() -> None:
    server = Server("names")
    server.add_tool(noop)
    with pytest.raises(ValueError, match="already registered"):
        server.add_tool(noop)


# -- definitions -------------------------------------------------------------------------------


async def test_title_annotations_icons_and_meta() -> None:
    server = Server("definitions")
    icon = {"src": "https://example.com/i.png", "mimeType": "image/png", "sizes": ["48x48"]}

    @server.tool(
        title="Delete a file",
        annotations={"destructiveHint": True, "idempotent_hint": True, "openWorldHint": False},
    )
    def delete(path: str) -> None:
        pass

    server.add_tool(
        noop,
        name="typed",
        annotations=ToolAnnotations(read_only_hint=True, title="Typed"),
        icons=[icon, Icon(src="data:image/svg+xml;base64,AAAA", theme="dark")],
        meta={"example.com/owner": "ops"},
    )

    async with Client(server) as client:
        tools = await tools_by_name(client)
        listed = await client.list_tools()

    assert tools["delete"]["title"] == "Delete a file"
    assert tools["delete"]["annotations"] == {
        "destructiveHint": True,
        "idempotentHint": True,
        "openWorldHint": False,
    }
    typed = tools["typed"]
    assert typed["annotations"] == {"readOnlyHint": True, "title": "Typed"}
    assert typed["icons"] == [icon, {"src": "data:image/svg+xml;base64,AAAA", "theme": "dark"}]
    assert typed["_meta"] == {"example.com/owner": "ops"}
    assert {tool.name for tool in listed.tools} == {"delete", "typed"}


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"annotations": {"readonly": 1}}, ValueError, "unknown tool annotation 'readonly'"),
        ({"annotations": {"readOnlyHint": "yes"}}, ValueError, "readOnlyHint must be a bool"),
        ({"annotations": ["readOnlyHint"]}, TypeError, "annotations must be a dict"),
        ({"icons": [{"mimeType": "image/png"}]}, ValueError, "an icon needs a string 'src'"),
        ({"run_in_thread": True, "name": "later"}, ValueError, "async; run_in_thread is for sync"),
    ],
)  # fmt: skip
def test_bad_options_are_refused_at_registration(
    options: dict[str, Any], error: type[Exception], message: str
) -> None:
    async def later() -> None:
        pass

    with pytest.raises(error, match=message):
        Server("bad").add_tool(later, **options)


async def test_tools_added_and_removed_at_run_time() -> None:
    server = Server("dynamic")
    server.add_tool(noop, name="first")
    async with Client(server) as client:
        server.add_tool(noop, name="second")
        assert set(await tools_by_name(client)) == {"first", "second"}
        server.remove_tool("first")
        assert set(await tools_by_name(client)) == {"second"}
        with pytest.raises(ProtocolError):
            await call(client, "first")
    with pytest.raises(KeyError):
        server.remove_tool("first")


async def test_older_revisions_are_paginated_too() -> None:
    server = Server("pages", page_size=2)
    for i in range(5):
        server.add_tool(noop, name=f"t{i}", title=f"Tool {i}")
    for revision in ("2025-03-26", "2025-11-25"):
        async with Client(server, protocol_version=revision) as client:
            names, cursor = [], None
            while True:
                page = await client.request("tools/list", {"cursor": cursor} if cursor else None)
                names += [tool["name"] for tool in page["tools"]]
                assert all(
                    ("title" in tool) == (revision >= "2025-06-18") for tool in page["tools"]
                )
                cursor = page.get("nextCursor")
                if cursor is None:
                    break
            assert names == ["t0", "t1", "t2", "t3", "t4"]


# -- errors ------------------------------------------------------------------------------------


def failing_server() -> Server:
    server = Server("errors")

    @server.tool()
    def boom(n: int) -> int:
        raise ValueError(f"no good: {n}")

    @server.tool()
    async def aboom() -> str:
        raise KeyError("missing")

    @server.tool()
    def silent() -> str:
        raise RuntimeError

    @server.tool()
    async def protocol() -> str:
        raise ProtocolError(-32042, "go elsewhere", {"url": "https://example.com"})

    return server


async def test_exceptions_are_tool_errors_with_their_message_only() -> None:
    async with Client(failing_server()) as client:
        boom = await call(client, "boom", n=3)
        aboom = await call(client, "aboom")
        silent = await call(client, "silent")
        assert (await call(client, "boom", n=4))["isError"] is True  # the session goes on

    assert boom == {"content": [{"type": "text", "text": "no good: 3"}], "isError": True}
    assert text(aboom) == "'missing'"
    assert text(silent) == "RuntimeError"
    assert "Traceback" not in text(boom)


async def test_tracebacks_only_when_the_registry_exposes_them() -> None:
    server = failing_server()
    server.tools.expose_tracebacks = True
    async with Client(server) as client:
        boom = text(await call(client, "boom", n=3))
        aboom = text(await call(client, "aboom"))
    assert boom.startswith("no good: 3\n\nTraceback (most recent call last):")
    assert 'raise ValueError(f"no good: {n}")' in boom
    assert "KeyError: 'missing'" in aboom


async def test_a_protocol_error_raised_in_a_tool_keeps_its_code() -> None:
    async with Client(failing_server()) as client:
        with pytest.raises(ProtocolError) as caught:
            await call(client, "protocol")
    assert caught.value.code == -32042
    assert caught.value.data == {"url": "https://example.com"}


# -- threads and the Context -------------------------------------------------------------------


async def test_sync_tools_run_inline_unless_asked_to_use_a_thread() -> None:
    server = Server("threads")
    loop_thread = threading.get_ident()

    def where() -> bool:
        return threading.get_ident() == loop_thread

    server.add_tool(where, name="inline")
    server.add_tool(where, name="threaded", run_in_thread=True)
    server.add_tool(where, name="pinned", run_in_thread=False)
    async with Client(server) as client:
        assert (await call(client, "inline"))["structuredContent"] == {"result": True}
        assert (await call(client, "threaded"))["structuredContent"] == {"result": False}
        server.tools.run_in_thread = True  # the default for every sync tool without a choice
        assert (await call(client, "inline"))["structuredContent"] == {"result": False}
        assert (await call(client, "pinned"))["structuredContent"] == {"result": True}


async def test_a_threaded_tool_does_not_block_the_loop() -> None:
    server = Server("threads")
    release = threading.Event()

    @server.tool()
    def unblock() -> str:
        release.set()
        return "released"

    def blocking() -> str:
        return "done" if release.wait(5) else "timed out"

    server.add_tool(blocking, run_in_thread=True)
    async with Client(server) as client:
        waiting = asyncio.create_task(call(client, "blocking"))
        assert text(await call(client, "unblock")) == "released"
        assert text(await waiting) == "done"


async def test_context_in_sync_async_threaded_and_optional_forms() -> None:
    server = Server("ctx")

    @server.tool()
    def sync_tool(x: int, ctx: Context) -> str:
        return f"{x}:{ctx.protocol_version}"

    @server.tool()
    async def async_tool(ctx: Context | None = None) -> str:
        assert ctx is not None
        await ctx.info("hello")
        return str(ctx.client_info["name"])

    def threaded(context: Context) -> str:
        return type(context).__name__

    server.add_tool(threaded, run_in_thread=True)

    async with Client(server, name="tester") as client:
        tools = await tools_by_name(client)
        assert text(await call(client, "sync_tool", x=1)) == f"1:{client.protocol_version}"
        assert text(await call(client, "async_tool")) == "tester"
        assert text(await call(client, "threaded")) == "Context"
    assert tools["sync_tool"]["inputSchema"]["properties"] == {"x": {"type": "integer"}}
    assert tools["async_tool"]["inputSchema"]["properties"] == {}


async def test_a_sync_wrapper_returning_a_coroutine_is_awaited() -> None:
    async def compute(x: int) -> int:
        await asyncio.sleep(0)
        return x * 2

    @functools.wraps(compute)
    def wrapper(x: int) -> Any:
        return compute(x)

    server = Server("wrapped")
    server.add_tool(wrapper, name="double", structured_output=False)
    async with Client(server) as client:
        assert text(await call(client, "double", x=21)) == "42"


def test_plain_tools_never_import_pydantic() -> None:
    code = """
import asyncio, sys
from mcpkit import Client, Server
server = Server("light")

@server.tool(annotations={"readOnlyHint": True})
def echo(text: str, times: int = 1, tags: list[str] | None = None) -> str:
    \"\"\"Echo.

    Args:
        text: What to echo.
    \"\"\"
    return text * times

@server.tool()
def add(a: int, b: float) -> float:
    return a + b

async def main():
    async with Client(server) as client:
        await client.request("tools/list")
        await client.request("tools/call", {"name": "echo", "arguments": {"text": "x"}})
        await client.request("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})
        await client.request("tools/call", {"name": "add", "arguments": {"a": "1", "b": 2}})
asyncio.run(main())
print(sorted(m for m in sys.modules if m.partition(".")[0] in ("pydantic", "pydantic_core")))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
