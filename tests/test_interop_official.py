"""Interop with the official Python SDK (`mcp==2.3.0`) as a real peer over stdio, both ways.

Official client -> `tests/fixtures/stdio_server.py` (mcpkit), and mcpkit's Client ->
`tests/fixtures/official_server.py` (the SDK's MCPServer), at every handshake revision.

How the 2.3.0 client picks a revision (read from its source):
- `ClientSession.initialize()` always offers `LATEST_HANDSHAKE_VERSION` ("2025-11-25"), a
  constant imported into `mcp.client.session`; there is no public parameter for an older
  offer. To offer an older revision we patch that module attribute with monkeypatch.
- The high-level `mcp.Client` (default `mode="auto"`) first probes `server/discover` at
  "2026-07-28" and falls back to `initialize` on any JSON-RPC error. mcpkit's server
  answers the probe, so the client stays on 2026-07-28
  (`test_official_auto_mode_speaks_modern_to_us`; the handshake revisions are pinned with
  `mode="legacy"`; tests/test_interop_modern.py covers the modern era in depth).
- The SDK validates every result against the negotiated revision's schema
  (`mcp_types.methods.validate_server_result`), so these tests also show that mcpkit's
  results are well-formed at each revision as the SDK sees them.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import IO, Any

import pytest

mcp = pytest.importorskip("mcp", reason="the official SDK is a dev dependency")

import mcp.client.session as official_session_module  # noqa: E402
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

from mcpkit import Client  # noqa: E402

pytestmark = pytest.mark.interop

FIXTURES = Path(__file__).parent / "fixtures"
OUR_SERVER = StdioServerParameters(command=sys.executable, args=[str(FIXTURES / "stdio_server.py")])
OFFICIAL_SERVER = [sys.executable, str(FIXTURES / "official_server.py")]
REVISIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]


@pytest.fixture
def errlog() -> Iterator[IO[str]]:
    """Where the server's stderr goes (the SDK wants a real file)."""
    with tempfile.TemporaryFile("w+") as file:
        yield file


@pytest.fixture(params=REVISIONS)
def revision(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """A revision the official client will offer (see the module docstring for why we patch)."""
    offered: str = request.param
    monkeypatch.setattr(official_session_module, "LATEST_HANDSHAKE_VERSION", offered)
    return offered


@asynccontextmanager
async def official_client(errlog: IO[str]) -> AsyncIterator[ClientSession]:
    async with (
        stdio_client(OUR_SERVER, errlog=errlog) as (read, write),
        ClientSession(read, write) as session,
    ):
        yield session


# -- the official client against mcpkit's server -----------------------------------------------


async def test_official_client_handshake_tools_and_call(revision: str, errlog: IO[str]) -> None:
    async with official_client(errlog) as session:
        result = await session.initialize()
        assert result.protocol_version == revision
        assert session.protocol_version == revision
        assert result.server_info.name == "stdio-fixture"
        assert result.server_info.version == "1.0.0"
        assert result.capabilities.tools is not None

        listed = await session.list_tools()
        tools = {tool.name: tool for tool in listed.tools}
        assert {"echo", "add", "sleep", "crash"} <= set(tools)
        assert tools["add"].input_schema == {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        }
        assert tools["echo"].input_schema == {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        }
        assert tools["add"].description == "Add two integers."

        added = await session.call_tool("add", {"a": 2, "b": 3})
        assert added.is_error is False
        assert [(block.type, block.text) for block in added.content] == [("text", "5")]  # type: ignore[union-attr]

        echoed = await session.call_tool("echo", {"text": "héllo ✓"})
        assert echoed.content[0].text == "héllo ✓"  # type: ignore[union-attr]
        await session.send_ping()


async def test_official_client_sees_errors_as_each_revision_says(
    revision: str, errlog: IO[str]
) -> None:
    async with official_client(errlog) as session:
        await session.initialize()

        with pytest.raises(MCPError) as unknown:  # a protocol error at every revision
            await session.call_tool("no_such_tool", {})
        assert unknown.value.error.code == -32602
        assert "no_such_tool" in unknown.value.error.message

        bad = {"a": "two", "b": 3}
        if revision >= "2025-11-25":
            # From 2025-11-25 bad arguments are a tool execution error the model can see.
            result = await session.call_tool("add", bad)
            assert result.is_error is True
            assert "a: expected integer" in result.content[0].text  # type: ignore[union-attr]
        else:
            with pytest.raises(MCPError) as invalid:
                await session.call_tool("add", bad)
            assert invalid.value.error.code == -32602
            assert "a: expected integer" in invalid.value.error.message

        # Errors left the session usable.
        assert (await session.call_tool("add", {"a": 1, "b": 1})).content[0].text == "2"  # type: ignore[union-attr]


async def test_official_auto_mode_speaks_modern_to_us(
    monkeypatch: pytest.MonkeyPatch, errlog: IO[str]
) -> None:
    """`mcp.Client` probes server/discover first; we answer it, so it stays on 2026-07-28."""
    probes: list[tuple[str, int | None]] = []
    send_discover = ClientSession.send_discover

    async def recording_send_discover(self: ClientSession, version: str) -> dict[str, Any]:
        try:
            answer = await send_discover(self, version)
        except MCPError as exc:
            probes.append((version, exc.error.code))
            raise
        probes.append((version, None))
        return answer

    monkeypatch.setattr(ClientSession, "send_discover", recording_send_discover)
    async with mcp.Client(stdio_client(OUR_SERVER, errlog=errlog)) as client:
        assert probes == [("2026-07-28", None)]
        assert client.protocol_version == "2026-07-28"
        assert client.session.discover_result is not None
        assert client.session.initialize_result is None
        added = await client.call_tool("add", {"a": 40, "b": 2})
        assert added.content[0].text == "42"  # type: ignore[union-attr]


# -- mcpkit's client against the official server -----------------------------------------------


async def check_our_client_against_official_server(rev: str) -> None:
    async with Client(OFFICIAL_SERVER, protocol_version=rev) as client:
        assert client.protocol_version == rev
        assert client.server_info["name"] == "official-fixture"
        assert "tools" in client.server_capabilities

        listed = await client.request("tools/list")
        tools = {tool["name"]: tool for tool in listed["tools"]}
        assert set(tools) == {"add", "echo"}
        add_schema = tools["add"]["inputSchema"]
        assert add_schema["type"] == "object"
        assert add_schema["required"] == ["a", "b"]
        assert {name: p["type"] for name, p in add_schema["properties"].items()} == {
            "a": "integer",
            "b": "integer",
        }

        added = await client.request("tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}})
        assert added["isError"] is False
        assert added["content"] == [{"type": "text", "text": "5"}]
        echoed = await client.request(
            "tools/call", {"name": "echo", "arguments": {"text": "héllo ✓"}}
        )
        assert echoed["content"] == [{"type": "text", "text": "héllo ✓"}]

        # The SDK's MCPServer reports an unknown tool as a tool error (isError), not -32602,
        # at every revision; our client hands that result back as it is.
        unknown = await client.request("tools/call", {"name": "nope", "arguments": {}})
        assert unknown["isError"] is True

        await client.ping()
        await client.ping()


async def test_our_client_against_official_server_at_every_revision() -> None:
    # One official server process per revision, all at once: importing the SDK's server takes
    # about two seconds of CPU per process, so running them one after another would be slow.
    outcomes = await asyncio.gather(
        *(check_our_client_against_official_server(rev) for rev in REVISIONS),
        return_exceptions=True,
    )
    failures = {rev: repr(o) for rev, o in zip(REVISIONS, outcomes, strict=True) if o is not None}
    assert not failures
