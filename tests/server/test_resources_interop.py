"""The official SDK's client (`mcp==2.3.0`) reads mcpkit resources over stdio.

See tests/test_interop_official.py for how the official client is pinned to a revision. The
SDK validates every result against the negotiated revision's schema, so these tests also show
the resource results are well-formed as the SDK sees them at each handshake revision.
"""

from __future__ import annotations

import base64
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import IO, Any

import anyio
import pytest

mcp = pytest.importorskip("mcp", reason="the official SDK is a dev dependency")

import mcp.client.session as official_session_module  # noqa: E402
from mcp import ClientSession, StdioServerParameters, types  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError  # noqa: E402

pytestmark = pytest.mark.interop

FIXTURE = Path(__file__).parent.parent / "fixtures" / "resources_server.py"
SERVER = StdioServerParameters(command=sys.executable, args=[str(FIXTURE)])
REVISIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]


@pytest.fixture
def errlog() -> Iterator[IO[str]]:
    with tempfile.TemporaryFile("w+") as file:
        yield file


@pytest.fixture(params=REVISIONS)
def revision(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    offered: str = request.param
    monkeypatch.setattr(official_session_module, "LATEST_HANDSHAKE_VERSION", offered)
    return offered


@asynccontextmanager
async def official_client(errlog: IO[str], on_message: Any = None) -> AsyncIterator[ClientSession]:
    async with (
        stdio_client(SERVER, errlog=errlog) as (read, write),
        ClientSession(read, write, message_handler=on_message) as session,
    ):
        yield session


async def test_official_client_reads_static_templated_and_binary(
    revision: str, errlog: IO[str]
) -> None:
    async with official_client(errlog) as session:
        initialized = await session.initialize()
        assert initialized.protocol_version == revision
        assert initialized.capabilities.resources is not None
        assert initialized.capabilities.resources.subscribe is True

        listed = {str(r.uri): r for r in (await session.list_resources()).resources}
        assert set(listed) == {"memo://welcome", "image://logo"}
        assert listed["memo://welcome"].mime_type == "text/plain"
        assert listed["image://logo"].size == 256
        templates = (await session.list_resource_templates()).resource_templates
        assert [(t.uri_template, t.name) for t in templates] == [
            ("users://{id}/profile", "profile")
        ]
        assert templates[0].description == "A user's profile, as JSON."

        [welcome] = (await session.read_resource("memo://welcome")).contents
        assert isinstance(welcome, types.TextResourceContents)
        assert welcome.text == "Welcome, héllo ✓"

        [profile] = (await session.read_resource("users://7/profile")).contents
        assert isinstance(profile, types.TextResourceContents)
        assert profile.mime_type == "application/json"
        assert profile.text == '{"id":7,"name":"user 7"}'

        [logo] = (await session.read_resource("image://logo")).contents
        assert isinstance(logo, types.BlobResourceContents)
        assert logo.mime_type == "image/png"
        assert base64.b64decode(logo.blob) == bytes(range(256))

        with pytest.raises(MCPError) as missing:
            await session.read_resource("users://999/profile")
        assert missing.value.error.code == -32002
        assert missing.value.error.data == {"uri": "users://999/profile"}


async def test_official_client_subscribes_and_hears_of_updates(errlog: IO[str]) -> None:
    updates: list[str] = []
    arrived = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updates.append(str(message.params.uri))
            arrived.set()

    async with official_client(errlog, on_message) as session:
        await session.initialize()
        with pytest.warns(MCPDeprecationWarning):  # deprecated for 2026-07-28, fine here
            await session.subscribe_resource("users://7/profile")
        told = await session.call_tool("touch", {"uri": "users://{id}/profile"})
        assert told.content[0].text == "1"  # type: ignore[union-attr]
        with anyio.fail_after(5):
            await arrived.wait()
        assert updates == ["users://7/profile"]
        untouched = await session.call_tool("touch", {"uri": "memo://welcome"})
        assert untouched.content[0].text == "0"  # type: ignore[union-attr]
