"""The typed client in process: against mcpkit's own `Server`, and against a scripted server
for what a well-behaved server never does (endless cursors, lying output, malformed answers)."""

from __future__ import annotations

import ast
import asyncio
import logging
import subprocess
import sys
from pathlib import Path
from typing import Any, TypedDict

import pytest

from mcpkit import Client, Server
from mcpkit.client import Elicitation, Sampling
from mcpkit.errors import (
    CapabilityNotDeclared,
    ConnectionClosed,
    InvalidResult,
    PaginationError,
    ProtocolError,
    RequestTimeout,
    ToolError,
    ToolOutputInvalid,
    URLElicitationRequired,
)
from mcpkit.server.context import Context
from mcpkit.types import CallToolResult, Tool

from .scripted import ScriptedServer

CLIENT_SOURCE = Path(__file__).resolve().parents[2] / "src" / "mcpkit" / "client"


class Forecast(TypedDict):
    city: str
    celsius: float


def demo_server(**options: Any) -> Server:
    server = Server("demo", version="1.2.3", instructions="Be nice.", **options)

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool()
    def forecast(city: str) -> Forecast:
        return {"city": city, "celsius": 21.5}

    @server.tool()
    def broken() -> str:
        raise ValueError("the disk is full")

    return server


# -- connecting ---------------------------------------------------------------------------------


async def test_what_the_server_said_about_itself() -> None:
    client = Client(demo_server(), name="tester", protocol_version="2025-06-18")
    with pytest.raises(RuntimeError, match="not connected"):
        _ = client.server_info
    async with client:
        assert client.server_info == {"name": "demo", "version": "1.2.3"}
        assert client.instructions == "Be nice."
        assert client.protocol_version == "2025-06-18"
        assert "tools" in client.server_capabilities
        assert client.supports("tools")
        assert client.supports("logging")
        assert not client.supports("resources", "subscribe")
        await client.ping()
    with pytest.raises(RuntimeError, match="not connected"):
        await client.ping()


@pytest.mark.parametrize(
    ("options", "declared"),
    [
        ({}, {}),
        ({"sampling": lambda p: {}}, {"sampling": {}}),
        (
            {"sampling": Sampling(lambda p: {}, tools=True)},
            {"sampling": {"tools": {}}},
        ),
        ({"elicitation": lambda p: {}}, {"elicitation": {"form": {}}}),
        (
            {"elicitation": Elicitation(lambda p: {}, url=True)},
            {"elicitation": {"form": {}, "url": {}}},
        ),
        ({"roots": ["/tmp"]}, {"roots": {"listChanged": True}}),
        ({"on_log": print, "on_list_changed": print, "max_pages": 3}, {}),
    ],
)
async def test_capabilities_are_declared_only_for_what_was_given(
    options: dict[str, Any], declared: dict[str, Any]
) -> None:
    scripted = ScriptedServer({})
    async with Client(scripted.client_end, **options):
        assert scripted.session.connection.peer_capabilities == declared
    await scripted.stop()


# -- tools --------------------------------------------------------------------------------------


async def test_tools_are_listed_by_page_and_to_the_end() -> None:
    server = Server("paged", page_size=2)
    for index in range(5):
        server.add_tool(lambda: "x", name=f"t{index}")
    async with Client(server) as client:
        first = await client.list_tools()
        assert [tool.name for tool in first.tools] == ["t0", "t1"]
        assert first.next_cursor is not None
        second = await client.list_tools(first.next_cursor)
        assert [tool.name for tool in second.tools] == ["t2", "t3"]
        every = await client.list_all_tools()
        assert [tool.name for tool in every] == [f"t{i}" for i in range(5)]
        assert all(isinstance(tool, Tool) for tool in every)
        names = [tool.name async for tool in client.iter_tools()]
        assert names == [tool.name for tool in every]
        with pytest.raises(PaginationError, match="after 2 pages"):
            await client.list_all_tools(max_pages=2)


async def test_call_tool_returns_typed_results_and_tool_errors_by_default() -> None:
    async with Client(demo_server()) as client:
        added = await client.call_tool("add", {"a": 2, "b": 3})
        assert isinstance(added, CallToolResult)
        assert added.content[0].text == "5"  # type: ignore[union-attr]
        assert added.is_error is False

        failed = await client.call_tool("broken")
        assert failed.is_error is True
        with pytest.raises(ToolError) as raised:
            await client.call_tool("broken", raise_on_error=True)
        assert raised.value.tool == "broken"
        assert raised.value.result.is_error is True
        assert str(raised.value).startswith("tool 'broken' reported an error: ")

        with pytest.raises(ProtocolError) as unknown:
            await client.call_tool("nope")
        assert unknown.value.code == -32602
        assert "nope" in unknown.value.message


async def test_structured_output_is_checked_against_the_listed_schema() -> None:
    async with Client(demo_server()) as client:
        result = await client.call_tool("forecast", {"city": "Oslo"})
        assert result.structured_content == {"city": "Oslo", "celsius": 21.5}


def lying_tools(answer: dict[str, Any]) -> dict[str, Any]:
    weather = {
        "name": "weather",
        "inputSchema": {"type": "object"},
        "outputSchema": {
            "type": "object",
            "properties": {"celsius": {"type": "number"}},
            "required": ["celsius"],
        },
    }
    free = {"name": "free", "inputSchema": {"type": "object"}}
    return {
        "tools/list": lambda params: {"tools": [weather, free]},
        "tools/call": lambda params: answer,
    }


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        (
            {"content": [], "structuredContent": {"celsius": "warm"}},
            "$.celsius: expected number, got string",
        ),
        ({"content": []}, "the tool declares an outputSchema but returned no structuredContent"),
    ],
)
async def test_output_that_breaks_the_schema_raises(answer: dict[str, Any], problem: str) -> None:
    scripted = ScriptedServer(lying_tools(answer))
    async with Client(scripted.client_end) as client:
        with pytest.raises(ToolOutputInvalid) as raised:
            await client.call_tool("weather", {})
        assert raised.value.problems == [problem]
        assert raised.value.result.structured_content == answer.get("structuredContent")
        assert "tool 'weather' returned structured content that does not match" in str(raised.value)
        # A tool error is not held to the schema.
        scripted.handlers["tools/call"] = lambda params: {"content": [], "isError": True}
        assert (await client.call_tool("weather", {})).is_error
    await scripted.stop()


async def test_unknown_tools_are_listed_once_per_list_change() -> None:
    answer = {"content": [], "structuredContent": {"celsius": 3}}
    scripted = ScriptedServer(lying_tools(answer))
    async with Client(scripted.client_end) as client:
        await client.call_tool("weather")
        await client.call_tool("weather")
        await client.call_tool("free")
        await client.call_tool("hidden")  # not in the listing: no validation, no second listing
        assert sorted(scripted.methods()) == ["tools/call"] * 4 + ["tools/list"]

        scripted.session.notify("notifications/tools/list_changed")
        await scripted.session.request("ping")  # the client has read the notification now
        scripted.handlers["tools/call"] = lambda p: {"content": [], "structuredContent": {}}
        with pytest.raises(ToolOutputInvalid):
            await client.call_tool("weather")
        assert sorted(scripted.methods()[-2:]) == ["tools/call", "tools/list"]

        # A listing done by the caller counts: no extra request afterwards.
        scripted.session.notify("notifications/tools/list_changed")
        await scripted.session.request("ping")
        await client.list_all_tools()
        count = len(scripted.requests)
        await client.call_tool("free")
        assert scripted.methods()[count:] == ["tools/call"]
    await scripted.stop()


async def test_a_listing_that_fails_is_tried_once() -> None:
    def refuse(params: dict[str, Any]) -> Any:
        raise ProtocolError(-32603, "listing is broken")

    scripted = ScriptedServer({"tools/list": refuse, "tools/call": lambda p: {"content": []}})
    async with Client(scripted.client_end) as client:
        for _ in range(3):
            assert (await client.call_tool("any")).content == []
        assert sorted(scripted.methods()) == ["tools/call"] * 3 + ["tools/list"]
    await scripted.stop()


async def test_concurrent_calls_share_one_listing() -> None:
    scripted = ScriptedServer(lying_tools({"content": [], "structuredContent": {"celsius": 1}}))
    async with Client(scripted.client_end) as client:
        await asyncio.gather(*(client.call_tool("weather") for _ in range(5)))
        assert scripted.methods().count("tools/list") == 1
        assert scripted.methods().count("tools/call") == 5
    await scripted.stop()


async def test_progress_reaches_the_callback_of_its_call() -> None:
    server = Server("progress")

    @server.tool()
    async def work(steps: int, ctx: Context) -> str:
        for step in range(1, steps + 1):
            await ctx.report_progress(step, steps, f"step {step}")
        return "done"

    seen: list[tuple[float, float | None, str | None]] = []
    async with Client(server) as client:
        result = await client.call_tool(
            "work", {"steps": 3}, on_progress=lambda *update: seen.append(update)
        )
        assert result.content[0].text == "done"  # type: ignore[union-attr]
    assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


async def test_a_per_call_timeout_cancels_the_call_on_the_server() -> None:
    server = Server("slow")
    stopped = asyncio.Event()
    calls: list[str] = []

    @server.tool()
    async def wait(ctx: Context) -> str:
        calls.append("wait")
        try:
            await asyncio.Event().wait()
        finally:
            stopped.set()
        return "never"

    async with Client(server, timeout=30) as client:
        with pytest.raises(RequestTimeout) as raised:
            await client.call_tool("wait", timeout=0.05)
        assert str(raised.value) == (
            "tools/call got no answer within 0.05 s; the request was cancelled"
        )
        await asyncio.wait_for(stopped.wait(), 2)
        assert calls == ["wait"]  # no retry
        await client.ping()  # the connection carries on


async def test_cancelling_the_awaiting_task_cancels_the_call() -> None:
    server = Server("cancel")
    started, stopped = asyncio.Event(), asyncio.Event()

    @server.tool()
    async def wait() -> str:
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            stopped.set()
        return "never"

    async with Client(server) as client:
        call = asyncio.create_task(client.call_tool("wait"))
        await asyncio.wait_for(started.wait(), 2)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        await asyncio.wait_for(stopped.wait(), 2)
        await client.ping()


async def test_cancellation_is_sent_as_notifications_cancelled() -> None:
    stopped = asyncio.Event()

    async def slow(params: dict[str, Any]) -> dict[str, Any]:
        try:
            await asyncio.Event().wait()
        finally:
            stopped.set()
        return {}

    scripted = ScriptedServer({"tools/call": slow, "tools/list": lambda p: {"tools": []}})
    async with Client(scripted.client_end) as client:
        call = asyncio.create_task(client.call_tool("slow"))
        await scripted.wait_for(lambda: "tools/call" in scripted.methods())
        call.cancel()
        await asyncio.wait_for(stopped.wait(), 2)  # the server's handler was cancelled
        (request,) = [m for m in scripted.client_end.written if m.get("method") == "tools/call"]
        assert scripted.client_end.written[-1] == {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": request["id"], "reason": "cancelled by the caller"},
        }
        await client.ping()
    await scripted.stop()


async def test_tool_annotations_are_exposed_and_never_acted_on() -> None:
    server = Server("hints")
    calls: list[str] = []
    hints = {"destructiveHint": True, "idempotentHint": True, "readOnlyHint": False}

    @server.tool(annotations=hints)
    async def wipe(ctx: Context) -> str:
        calls.append("wipe")
        await asyncio.Event().wait()
        return "never"

    async with Client(server) as client:
        (tool,) = await client.list_all_tools()
        assert tool.annotations is not None and tool.annotations.destructive_hint is True
        # Destructive: no confirmation step. Idempotent: no retry after a timeout.
        with pytest.raises(RequestTimeout):
            await client.call_tool("wipe", timeout=0.05)
        assert calls == ["wipe"]


def test_no_client_code_reads_tool_annotations() -> None:
    """Structural guarantee: no attribute access to annotations or *_hint in mcpkit.client."""
    for path in CLIENT_SOURCE.glob("*.py"):
        tree = ast.parse(path.read_text())
        names = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
        names |= {
            node.value
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and len(node.value) < 40
        }
        touched = {
            n
            for n in names
            if n in ("annotations", "readOnlyHint") or n.endswith(("_hint", "Hint"))
        }
        assert not touched, f"{path.name} reads {touched}"


# -- pagination against a server that never stops ----------------------------------------------


async def test_a_server_that_never_stops_paging_hits_the_cap() -> None:
    counter = iter(range(10**6))
    scripted = ScriptedServer(
        {"prompts/list": lambda params: {"prompts": [], "nextCursor": f"c{next(counter)}"}}
    )
    async with Client(scripted.client_end, max_pages=5) as client:
        with pytest.raises(PaginationError) as raised:
            await client.list_all_prompts()
        assert str(raised.value) == (
            "prompts/list: gave up after 5 pages: the server is still returning cursors after "
            "5 pages (pass max_pages= to allow more)"
        )
        assert scripted.methods() == ["prompts/list"] * 5
        with pytest.raises(PaginationError):
            await client.list_all_prompts(max_pages=1)
    await scripted.stop()


async def test_a_repeated_cursor_is_a_loop() -> None:
    scripted = ScriptedServer(
        {
            "resources/list": lambda params: {"resources": [], "nextCursor": "same"},
            "resources/templates/list": lambda params: {"resourceTemplates": [], "nextCursor": ""},
        }
    )
    async with Client(scripted.client_end) as client:
        with pytest.raises(PaginationError, match="returned the cursor 'same' a second time"):
            await client.list_all_resources()
        assert scripted.methods() == ["resources/list", "resources/list"]
        assert await client.list_all_resource_templates() == []  # "" ends the list
    await scripted.stop()


# -- errors -------------------------------------------------------------------------------------


async def test_errors_name_what_went_wrong() -> None:
    required = {
        "code": -32042,
        "message": "This request requires more information.",
        "data": {
            "elicitations": [
                {"mode": "url", "elicitationId": "e1", "url": "https://x.test/c", "message": "m"}
            ]
        },
    }

    def needs_url(params: dict[str, Any]) -> Any:
        raise ProtocolError(**required)

    scripted = ScriptedServer(
        {"tools/list": lambda p: {"tools": "nope"}, "tools/call": needs_url},
        capabilities={"tools": {}},
    )
    async with Client(scripted.client_end) as client:
        with pytest.raises(InvalidResult) as malformed:
            await client.list_tools()
        assert str(malformed.value).startswith("the answer to tools/list is malformed: tools:")

        with pytest.raises(URLElicitationRequired) as url:
            await client.call_tool("pay")
        assert url.value.code == -32042
        assert url.value.elicitations == required["data"]["elicitations"]  # type: ignore[index]
        assert str(url.value) == (
            "This request requires more information. (code -32042; open https://x.test/c and retry)"
        )

        with pytest.raises(CapabilityNotDeclared, match="did not declare the 'prompts'"):
            await client.list_prompts()
        with pytest.raises(ValueError, match="unknown log level 'loud'"):
            await client.set_logging_level("loud")
        with pytest.raises(TypeError, match="exactly one of prompt= or resource="):
            await client.complete("a", "b")
        assert sorted(scripted.methods()) == ["tools/call", "tools/list", "tools/list"]

        pending = asyncio.create_task(client.request("tools/call", {"name": "x"}))
        scripted.handlers["tools/call"] = lambda p: asyncio.get_running_loop().create_future()
        await scripted.stop()
        with pytest.raises(ConnectionClosed, match="in-memory peer closed"):
            await pending
        with pytest.raises(ConnectionClosed):
            await client.ping()


# -- notifications ------------------------------------------------------------------------------


async def test_notifications_reach_their_callbacks(caplog: pytest.LogCaptureFixture) -> None:
    scripted = ScriptedServer({})
    seen: list[Any] = []
    arrived, prompts_changed = asyncio.Event(), asyncio.Event()

    async def on_list_changed(kind: str) -> None:
        seen.append(("changed", kind))
        if kind == "prompts":
            prompts_changed.set()

    def on_resource_updated(uri: str) -> None:
        seen.append(("updated", uri))
        raise RuntimeError("a broken callback")  # logged, and the connection carries on

    def on_notification(method: str, params: Any) -> None:
        seen.append((method, params))
        if method == "custom/done":
            arrived.set()

    async with Client(
        scripted.client_end,
        on_log=lambda p: seen.append(("log", p.level, p.logger, p.data)),
        on_list_changed=on_list_changed,
        on_resource_updated=on_resource_updated,
        on_notification=on_notification,
    ) as client:
        await scripted.ready()
        notify = scripted.session.notify
        notify("notifications/message", {"level": "warning", "logger": "db", "data": {"n": 1}})
        notify("notifications/message", {"level": "unheard-of", "data": 1})  # malformed
        notify("notifications/tools/list_changed")
        notify("notifications/resources/list_changed")
        notify("notifications/prompts/list_changed")
        notify("notifications/resources/updated", {"uri": "file:///a"})
        notify("custom/done", {"x": 1})
        with caplog.at_level(logging.ERROR, logger="mcpkit.client"):
            await asyncio.wait_for(arrived.wait(), 2)
            await asyncio.wait_for(prompts_changed.wait(), 2)  # async callbacks run in tasks
            await client.ping()
    await scripted.stop()
    assert ("log", "warning", "db", {"n": 1}) in seen
    assert [s for s in seen if s[0] == "changed"] == [
        ("changed", "tools"),
        ("changed", "resources"),
        ("changed", "prompts"),
    ]
    assert ("updated", "file:///a") in seen
    assert ("notifications/message", {"level": "unheard-of", "data": 1}) in seen
    assert ("custom/done", {"x": 1}) in seen
    assert not any(s[0] == "log" and s[1] == "unheard-of" for s in seen)
    assert "notification callback" in caplog.text and "a broken callback" in caplog.text


async def test_log_level_and_messages_with_the_mcpkit_server() -> None:
    server = Server("chatty")

    @server.tool()
    async def speak(ctx: Context) -> str:
        await ctx.debug("quiet")
        await ctx.warning("loud")
        return "ok"

    messages: list[tuple[str, Any]] = []
    async with Client(server, on_log=lambda p: messages.append((p.level, p.data))) as client:
        await client.set_logging_level("warning")
        await client.call_tool("speak")
        await client.set_logging_level("debug")
        await client.call_tool("speak")
    assert messages == [("warning", "loud"), ("debug", "quiet"), ("warning", "loud")]


# -- prompts and completion with the mcpkit server ----------------------------------------------


async def test_prompts_and_completion_with_the_mcpkit_server() -> None:
    server = Server("prompts")

    @server.prompt()
    def review(code: str, language: str = "python") -> str:
        """Review some code."""
        return f"Review this {language}: {code}"

    @server.completion("ref/prompt", "review", "language")
    def languages(argument: str, value: str, context: dict[str, str]) -> list[str]:
        return [name for name in ("python", "perl", "rust") if name.startswith(value)]

    async with Client(server) as client:
        (prompt,) = await client.list_all_prompts()
        assert prompt.name == "review"
        assert [(a.name, a.required) for a in prompt.arguments or []] == [
            ("code", True),
            ("language", False),
        ]
        rendered = await client.get_prompt("review", {"code": "x = 1", "language": "perl"})
        assert rendered.messages[0].content.text == "Review this perl: x = 1"  # type: ignore[union-attr]
        completed = await client.complete("language", "p", prompt="review")
        assert completed.completion.values == ["python", "perl"]


def test_importing_the_client_stays_light() -> None:
    """No pydantic models, no transport, no jsonschema until a client connects and parses."""
    code = (
        "import sys, mcpkit.client; "
        "print(sorted(m for m in ('pydantic', 'jsonschema', 'mcpkit.types._neutral', "
        "'mcpkit.transports.stdio') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


async def test_a_command_that_cannot_start_is_a_connection_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(ConnectionClosed, match="'no-such-mcp-server' was not found"):
        async with Client(["no-such-mcp-server", "--port", "1"]):
            pass
    script = tmp_path / "server.sh"
    script.write_text("#!/bin/sh\n")  # not executable
    with pytest.raises(ConnectionClosed, match="is not executable"):
        async with Client([str(script)]):
            pass
    with pytest.raises(ConnectionClosed, match="directory '/no/such/dir' does not exist"):
        async with Client(["python3", "-c", "pass"], cwd="/no/such/dir"):
            pass


NOISY = """
import sys
from mcpkit import Server
server = Server("noisy")

@server.tool()
def add(a: int, b: int) -> int:
    return a + b

for step in range(5):  # the classic bug: print() to stdout before the server takes it over
    print("starting up...", step)
sys.stdout.flush()
server.run()
"""

SILENT_BUT_NOISY = """
import sys, time
print("Welcome to my server!", flush=True)
time.sleep(30)
"""


async def test_junk_on_a_servers_stdout_is_a_warning_naming_it_and_costs_nothing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    script = tmp_path / "noisy.py"
    script.write_text(NOISY)
    with caplog.at_level(logging.WARNING, logger="mcpkit"):
        async with Client([sys.executable, str(script)], timeout=10) as client:
            results = await asyncio.gather(
                *(client.call_tool("add", {"a": n, "b": 1}) for n in range(5))
            )
            assert [r.structured_content for r in results] == [{"result": n + 1} for n in range(5)]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("'starting up... 0'" in w and str(script) in w for w in warnings)
    assert len([w for w in warnings if "not JSON-RPC" in w]) == 3  # the first three, then quiet


async def test_a_timeout_after_junk_on_stdout_says_so(tmp_path: Path) -> None:
    script = tmp_path / "welcome.py"
    script.write_text(SILENT_BUT_NOISY)
    with pytest.raises(RequestTimeout) as timed_out:
        async with Client([sys.executable, str(script)], mode="handshake", timeout=1):
            pass
    message = str(timed_out.value)
    assert "initialize got no answer within 1 s" in message
    assert "'Welcome to my server!'" in message and "print() to stdout" in message


async def test_options_made_once_configure_many_clients() -> None:
    import dataclasses

    from mcpkit.client import ClientOptions

    server = Server("opts")

    @server.tool()
    def add(a: int, b: int) -> int:
        return a + b

    shared = ClientOptions(name="host", timeout=5, max_pages=3)
    async with Client.with_options(server, shared) as first:
        assert first.options is shared and first.max_pages == 3
        assert (await first.call_tool("add", {"a": 1, "b": 2})).structured_content == {"result": 3}
    other = dataclasses.replace(shared, max_pages=7)
    async with Client.with_options(server, other) as second:
        assert second.max_pages == 7 and second.options.name == "host"
    assert Client(server, timeout=2).options == ClientOptions(timeout=2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        shared.timeout = 1  # type: ignore[misc]
