"""The official SDK's client (`mcp==2.3.0`) lists and gets mcpkit prompts and asks for
completions, over stdio, at every handshake revision (`tests/fixtures/prompts_server.py`).

The SDK validates each result against the negotiated revision's schema, so this also shows
the results are well-formed as the SDK sees them. See tests/test_interop_official.py for how
the revision is chosen.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest

mcp = pytest.importorskip("mcp", reason="the official SDK is a dev dependency")

import mcp.client.session as official_session_module  # noqa: E402
from mcp import ClientSession, StdioServerParameters, types  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

pytestmark = pytest.mark.interop

SERVER = StdioServerParameters(
    command=sys.executable,
    args=[str(Path(__file__).parent.parent / "fixtures" / "prompts_server.py")],
)
REVISIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]


@pytest.fixture
def errlog() -> Iterator[IO[str]]:
    with tempfile.TemporaryFile("w+") as file:
        yield file


@pytest.mark.parametrize("revision", REVISIONS)
async def test_official_client_lists_gets_and_completes_prompts(
    revision: str, errlog: IO[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(official_session_module, "LATEST_HANDSHAKE_VERSION", revision)
    async with (
        stdio_client(SERVER, errlog=errlog) as (read, write),
        ClientSession(read, write) as session,
    ):
        initialized = await session.initialize()
        assert initialized.protocol_version == revision
        assert initialized.capabilities.prompts is not None
        assert initialized.capabilities.prompts.list_changed is True
        assert initialized.capabilities.completions is not None

        listed = await session.list_prompts()
        prompts = {prompt.name: prompt for prompt in listed.prompts}
        assert set(prompts) == {"review", "stack"}
        review = prompts["review"]
        assert review.title == "Code review"
        assert review.description == "Ask for a code review."
        assert [(a.name, a.description, a.required) for a in review.arguments or []] == [
            ("code", "The code to review.", True),
            ("language", "Its programming language.", False),
            ("passes", "How many review passes.", False),
        ]

        got = await session.get_prompt(
            "review", {"code": "x = 1", "language": "rust", "passes": "2"}
        )
        assert got.description == "Ask for a code review."
        first, second, third = got.messages
        assert first.role == "user"
        assert isinstance(first.content, types.TextContent)
        assert first.content.text == "Review this rust code 2 time(s):\nx = 1"
        assert second.role == "assistant"
        assert isinstance(second.content, types.ImageContent)
        assert second.content.mime_type == "image/png"
        assert isinstance(third.content, types.EmbeddedResource)
        assert third.content.resource.uri == "docs://style"

        with pytest.raises(MCPError) as missing:
            await session.get_prompt("review", {"language": "rust"})
        assert missing.value.error.code == -32602
        assert "'code'" in missing.value.error.message
        with pytest.raises(MCPError) as bad:
            await session.get_prompt("review", {"code": "x", "passes": "many"})
        assert bad.value.error.code == -32602
        assert "'passes'" in bad.value.error.message

        ref = types.PromptReference(type="ref/prompt", name="stack")
        languages = await session.complete(ref, {"name": "language", "value": "py"})
        assert languages.completion.values == ["python"]
        assert languages.completion.total == 1
        assert languages.completion.has_more is False
        if revision >= "2025-06-18":  # context.arguments arrived in 2025-06-18
            frameworks = await session.complete(
                ref, {"name": "framework", "value": "a"}, context_arguments={"language": "rust"}
            )
            assert frameworks.completion.values == ["axum", "actix"]

        # Literal arguments complete themselves.
        review_ref = types.PromptReference(type="ref/prompt", name="review")
        automatic = await session.complete(review_ref, {"name": "language", "value": "r"})
        assert automatic.completion.values == ["rust"]
