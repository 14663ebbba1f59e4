"""The demo server (every server feature) driven over stdio by the official SDK client.

The SDK validates every result against the negotiated revision's schema, so this proves each
feature's answers are well-formed as another implementation reads them. Sampling, elicitation
and roots go through the SDK's client callbacks, so the server-to-client requests are real.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

mcp = pytest.importorskip("mcp", reason="the official SDK is a dev dependency")

from mcp import ClientSession, StdioServerParameters, types  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

pytestmark = [
    pytest.mark.interop,
    # The SDK flags logging/setLevel as deprecated by 2026-07-28; it is current at 2025-11-25.
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

DEMO = Path(__file__).resolve().parents[1] / "examples" / "demo_server.py"


async def sampling(
    context: Any, params: types.CreateMessageRequestParams
) -> types.CreateMessageResult:
    question = params.messages[0].content.text  # type: ignore[union-attr]
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text=f"echo: {question}"),
        model="test-model",
    )


async def elicitation(context: Any, params: Any) -> types.ElicitResult:
    assert "Really deploy?" in params.message
    assert set(params.requested_schema["properties"]) == {"confirm", "note"}
    return types.ElicitResult(action="accept", content={"confirm": True, "note": "ok"})


async def roots(context: Any) -> types.ListRootsResult:
    return types.ListRootsResult(roots=[types.Root(uri="file:///home/user/project")])


@asynccontextmanager
async def demo_session(**callbacks: Any) -> AsyncIterator[tuple[ClientSession, list[Any]]]:
    logs: list[Any] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params)

    server = StdioServerParameters(command=sys.executable, args=[str(DEMO)])
    with tempfile.TemporaryFile("w+") as errlog:
        async with (
            stdio_client(server, errlog=errlog) as (read, write),
            ClientSession(read, write, logging_callback=on_log, **callbacks) as session,
        ):
            await session.initialize()
            yield session, logs


def text(result: Any) -> str:
    return str(result.content[0].text)


async def test_tools_with_progress_logging_structured_output_and_images() -> None:
    async with demo_session() as (session, logs):
        listed = await session.list_tools()
        names = [tool.name for tool in listed.tools]
        assert names == sorted(names)  # tools/list is ordered by name in every era
        assert {"add", "greet", "countdown", "statistics"} <= set(names)
        stats = next(tool for tool in listed.tools if tool.name == "statistics")
        assert set(stats.output_schema["properties"]) == {"count", "mean", "largest"}  # type: ignore[index]
        assert text(await session.call_tool("add", {"a": 20, "b": 22})) == "42"

        result = await session.call_tool("statistics", {"values": [1, 2, 6]})
        assert result.structured_content == {"count": 3, "mean": 3.0, "largest": 6.0}

        image = await session.call_tool("pixel", {})
        assert image.content[0].type == "image" and image.content[0].mime_type == "image/png"

        await session.set_logging_level("debug")
        seen: list[float] = []

        async def progress(value: float, total: float | None, message: str | None) -> None:
            seen.append(value)

        counted = await session.call_tool("countdown", {"start": 2}, progress_callback=progress)
        assert counted.structured_content == {"result": ["2", "1", "0"]}
        assert seen == [1, 2, 3]
        assert [log.data for log in logs] == ["counted 2", "counted 1", "counted 0"]

        failed = await session.call_tool("statistics", {"values": []})
        assert failed.is_error and "at least one value" in text(failed)


async def test_sampling_elicitation_and_roots_reach_the_client_callbacks() -> None:
    callbacks = {
        "sampling_callback": sampling,
        "elicitation_callback": elicitation,
        "list_roots_callback": roots,
    }
    async with demo_session(**callbacks) as (session, _):
        assert text(await session.call_tool("ask_model", {"question": "2+2?"})) == "echo: 2+2?"
        assert (
            text(await session.call_tool("confirm", {"action": "deploy"})) == "confirmed: True ok"
        )
        listed = await session.call_tool("roots", {})
        assert listed.structured_content == {"result": ["file:///home/user/project"]}


async def test_without_sampling_the_tool_reports_a_clear_error() -> None:
    async with demo_session() as (session, _):
        result = await session.call_tool("ask_model", {"question": "hi"})
        assert result.is_error and "sampling" in text(result)


async def test_resources_templates_subscriptions_prompts_and_completion() -> None:
    updates: list[str] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updates.append(str(message.params.uri))

    async with demo_session(message_handler=on_message) as (session, _):
        uris = [str(r.uri) for r in (await session.list_resources()).resources]
        assert "demo://readme" in uris and "examples://demo_server.py" in uris
        templates = [
            t.uri_template for t in (await session.list_resource_templates()).resource_templates
        ]
        assert "notes://{name}" in templates

        readme = await session.read_resource("demo://readme")
        assert readme.contents[0].text == "This server demonstrates every feature."  # type: ignore[union-attr]
        note = await session.read_resource("notes://welcome")
        assert note.contents[0].text == "Welcome to mcpkit."  # type: ignore[union-attr]

        await session.subscribe_resource("notes://todo")
        await session.call_tool("write_note", {"name": "todo", "text": "ship it"})
        await session.send_ping()  # the update was sent before the ping's answer
        assert updates == ["notes://todo"]

        prompt = await session.get_prompt("review", {"code": "x = 1", "language": "rust"})
        assert [m.role for m in prompt.messages] == ["user", "assistant"]
        assert "rust code" in prompt.messages[0].content.text  # type: ignore[union-attr]

        ref = types.PromptReference(type="ref/prompt", name="review")
        languages = await session.complete(ref, {"name": "language", "value": "r"})
        assert languages.completion.values == ["rust"]
        notes = types.ResourceTemplateReference(type="ref/resource", uri="notes://{name}")
        completed = await session.complete(notes, {"name": "name", "value": "w"})
        assert completed.completion.values == ["welcome"]
