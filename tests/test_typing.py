"""The types the public API promises, checked by mypy itself: a snippet using the client is
type-checked in strict mode, with `assert_type` where a return type depends on an argument."""

from __future__ import annotations

from pathlib import Path

from tests.typecheck import mypy_strict

SNIPPET = """
from typing import assert_type
from mcpkit import Client
from mcpkit.client.mrtr import InputRequired
from mcpkit.types import CallToolResult, GetPromptResult, ReadResourceResult

async def use(client: Client) -> None:
    assert_type(await client.call_tool("t"), CallToolResult)
    assert_type(
        await client.call_tool("t", input_required="return"), CallToolResult | InputRequired
    )
    assert_type(await client.read_resource("u"), ReadResourceResult)
    assert_type(
        await client.read_resource("u", input_required="return"),
        ReadResourceResult | InputRequired,
    )
    assert_type(await client.get_prompt("p"), GetPromptResult)
    assert_type(
        await client.get_prompt("p", input_required="return"), GetPromptResult | InputRequired
    )
"""


def test_input_required_return_types_are_what_the_argument_says(tmp_path: Path) -> None:
    checked = mypy_strict(SNIPPET, tmp_path)
    assert checked.returncode == 0, checked.stdout


MESSAGES = """
from mcpkit import AssistantMessage, Image, UserMessage
from mcpkit.types import ImageContent, TextContent

UserMessage("text")
UserMessage({"type": "text", "text": "a block in wire form"})
UserMessage(Image(b"png", mime_type="image/png"))
AssistantMessage(TextContent(type="text", text="a protocol model"))
AssistantMessage(ImageContent(type="image", data="cG5n", mimeType="image/png"))
UserMessage(42)  # line 10: not content
"""


def test_prompt_messages_take_content_and_refuse_the_rest(tmp_path: Path) -> None:
    checked = mypy_strict(MESSAGES, tmp_path)
    errors = [line for line in checked.stdout.splitlines() if ": error:" in line]
    assert len(errors) == 1 and ":10: error:" in errors[0], checked.stdout
