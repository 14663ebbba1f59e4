"""MCP Apps' shared rules in the sans-IO core: how a tool's `_meta` names its view and its
audience (read as a host must: untrusted, with the deprecated flat key as a fallback), and
which extensions a handshake carries."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit.protocol.apps import APPS_EXTENSION, ToolUi, tool_ui
from mcpkit.protocol.lifecycle import handshake_extensions, initialize_params
from mcpkit.protocol.tasks import EXTENSION as TASKS
from mcpkit.protocol.tasks import handshake_capabilities

BOTH = ("model", "app")


@pytest.mark.parametrize(
    ("meta", "expected"),
    [
        (None, ToolUi(None, BOTH)),
        ({}, ToolUi(None, BOTH)),
        ({"ui": "ui://x"}, ToolUi(None, BOTH)),
        ({"ui": {"resourceUri": "ui://a/v"}}, ToolUi("ui://a/v", BOTH)),
        ({"ui/resourceUri": "ui://old/v"}, ToolUi("ui://old/v", BOTH)),
        (
            {"ui": {"resourceUri": "ui://new"}, "ui/resourceUri": "ui://old"},
            ToolUi("ui://new", BOTH),
        ),
        ({"ui": {"resourceUri": 42}}, ToolUi(None, BOTH)),
        ({"ui": {"visibility": ["app"]}}, ToolUi(None, ("app",))),
        ({"ui": {"visibility": ["model", "admin", 3]}}, ToolUi(None, ("model",))),
        ({"ui": {"visibility": []}}, ToolUi(None, ())),
        ({"ui": {"visibility": "model"}}, ToolUi(None, ())),  # malformed: nobody
    ],
)
def test_tool_ui_reads_untrusted_meta(meta: Any, expected: ToolUi) -> None:
    found = tool_ui(meta)
    assert found == expected
    assert found.for_model == ("model" in expected.visibility)
    assert found.for_app == ("app" in expected.visibility)


def test_a_handshake_carries_the_apps_extension_only() -> None:
    apps = {APPS_EXTENSION: {"mimeTypes": ["text/html;profile=mcp-app"]}}
    both = {"roots": {}, "extensions": {**apps, TASKS: {}, "x/other": {}}}
    assert initialize_params("2025-11-25", both, {})["capabilities"] == {
        "roots": {},
        "extensions": apps,
    }
    assert handshake_capabilities({"tools": {}, "extensions": {TASKS: {}}}) == {"tools": {}}
    assert handshake_extensions({"tools": {}, "extensions": "junk"}) == {"tools": {}}
    plain = {"tools": {}}
    assert handshake_extensions(plain) is plain
