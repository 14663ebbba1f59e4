"""The typed client against the official SDK's `MCPServer` (`mcp==2.3.0`) over stdio, at every
handshake revision: tools (plain, structured output, tool errors, progress), static and
templated resources with subscriptions, prompts, completion and logging.

The server is tests/fixtures/official_full_server.py. One process per revision, all at once:
importing the SDK costs about two seconds of CPU per process.
"""

from __future__ import annotations

import asyncio
import base64
import sys
from pathlib import Path
from typing import Any

import pytest

from mcpkit import Client
from mcpkit.errors import ProtocolError, ToolError
from mcpkit.types import (
    BlobResourceContents,
    LoggingMessageNotificationParams,
    TextContent,
    TextResourceContents,
)

pytest.importorskip("mcp", reason="the official SDK is a dev dependency")

SERVER = [sys.executable, str(Path(__file__).parents[1] / "fixtures" / "official_full_server.py")]
REVISIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]


def text(result: Any) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


async def exercise(revision: str) -> None:
    logs: list[LoggingMessageNotificationParams] = []
    updated: list[str] = []
    async with Client(
        SERVER, protocol_version=revision, on_log=logs.append, on_resource_updated=updated.append
    ) as client:
        assert client.protocol_version == revision
        assert client.server_info["name"] == "official-full"
        assert client.instructions == "A test server."
        for capability in ("tools", "prompts", "completions", "logging"):
            assert client.supports(capability), capability
        assert client.supports("resources", "subscribe")

        # -- tools
        tools = {tool.name: tool for tool in await client.list_all_tools()}
        assert set(tools) == {"add", "weather", "fail", "countdown", "shout"}
        assert tools["add"].input_schema.required == ["a", "b"]
        assert tools["add"].description == "Add two integers."
        added = await client.call_tool("add", {"a": 2, "b": 3})
        assert text(added) == "5"
        weather = await client.call_tool("weather", {"city": "Paris"})
        assert tools["weather"].output_schema is not None  # so this was validated
        assert weather.structured_content == {"city": "Paris", "celsius": 21.5, "sunny": True}
        failed = await client.call_tool("fail", {"reason": "x"})
        assert failed.is_error is True
        with pytest.raises(ToolError, match="tool 'fail' reported an error: Error executing"):
            await client.call_tool("fail", {"reason": "x"}, raise_on_error=True)
        progress: list[tuple[float, float | None, str | None]] = []
        done = await client.call_tool(
            "countdown", {"steps": 3}, on_progress=lambda *update: progress.append(update)
        )
        assert text(done) == "done"
        # (The SDK sends progress messages even at 2024-11-05; the client passes them on.)
        assert progress == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]

        # -- resources
        resources = {r.uri: r for r in await client.list_all_resources()}
        assert set(resources) == {"memo://readme", "memo://logo"}
        assert resources["memo://readme"].mime_type == "text/plain"
        (readme,) = (await client.read_resource("memo://readme")).contents
        assert isinstance(readme, TextResourceContents) and readme.text == "read me first"
        (logo,) = (await client.read_resource("memo://logo")).contents
        assert isinstance(logo, BlobResourceContents)
        assert base64.b64decode(logo.blob) == b"\x89PNG\r\n\x1a\n"
        (template,) = await client.list_all_resource_templates()
        assert template.uri_template == "memo://notes/{topic}"
        (note,) = (await client.read_resource("memo://notes/tea")).contents
        assert isinstance(note, TextResourceContents) and note.text == "notes about tea"
        with pytest.raises(ProtocolError):
            await client.read_resource("memo://nowhere")

        # -- prompts and completion
        (prompt,) = await client.list_all_prompts()
        assert prompt.name == "review"
        assert [(a.name, a.required) for a in prompt.arguments or []] == [
            ("code", True),
            ("language", False),
        ]
        rendered = await client.get_prompt("review", {"code": "x = 1", "language": "rust"})
        assert rendered.messages[0].role == "user"
        assert rendered.messages[0].content.text == "Review this rust code:\nx = 1"  # type: ignore[union-attr]
        languages = await client.complete("language", "p", prompt="review")
        assert languages.completion.values == ["python", "pascal", "perl"]
        assert languages.completion.total == 3
        topics = await client.complete("topic", "te", resource="memo://notes/{topic}")
        assert topics.completion.values == ["tea", "tennis"]

        # -- logging and subscriptions
        await client.set_logging_level("critical")
        await client.subscribe_resource("memo://readme")
        assert text(await client.call_tool("shout", {"text": "hey"})) == "HEY"
        assert [(m.level, m.logger, m.data) for m in logs] == [
            ("critical", "shout", "critical: hey"),
            ("alert", "shout", "alert: hey"),
            ("emergency", "shout", "emergency: hey"),
        ]
        assert updated == ["memo://readme"]
        await client.unsubscribe_resource("memo://readme")
        await client.call_tool("shout", {"text": "again"})
        assert updated == ["memo://readme"]
        await client.ping()


async def test_typed_client_against_the_official_server_at_every_revision() -> None:
    outcomes = await asyncio.gather(*(exercise(rev) for rev in REVISIONS), return_exceptions=True)
    failures = {rev: repr(o) for rev, o in zip(REVISIONS, outcomes, strict=True) if o is not None}
    assert not failures
