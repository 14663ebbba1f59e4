"""The client's era detection against real servers over stdio: the official SDK (mcp 2.3.0,
both eras), our own demo server, and the handshake-only npm reference server. The same
sampling / elicitation / roots handlers serve both eras (requests mid-call in the handshake
era, input_required rounds at 2026-07-28).
"""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcpkit import Client
from mcpkit.client import era as era_module
from mcpkit.client.era import EraMismatch
from mcpkit.types import TextContent
from tests.peers import node_env, npm_command

pytestmark = pytest.mark.interop

DEMO = Path(__file__).resolve().parents[2] / "examples" / "demo_server.py"

OFFICIAL = textwrap.dedent(
    '''
    """Official SDK 2.3.0 server serving both eras: `server.py stdio` or `server.py http PORT`."""
    import sys
    from typing import Annotated
    from pydantic import BaseModel
    from mcp.server.mcpserver import MCPServer, Context, Resolve, Elicit
    from mcp_types import InputRequiredResult, ElicitRequest, ElicitRequestFormParams

    mcp = MCPServer("official-modern")

    @mcp.tool()
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    class Name(BaseModel):
        name: str

    def ask_name(ctx: Context) -> Elicit[Name]:
        return Elicit("What is your name?", Name)

    @mcp.tool()
    def greet(who: Annotated[Name, Resolve(ask_name)]) -> str:
        """Elicitation in either era."""
        return f"Hello, {who.name}!"

    @mcp.tool()
    async def greet_raw(ctx: Context) -> str | InputRequiredResult:
        """Hand-rolled input_required (modern only)."""
        answer = (ctx.input_responses or {}).get("user_name")
        if answer is None:
            schema = {"type": "object", "properties": {"name": {"type": "string"}}}
            ask = ElicitRequest(params=ElicitRequestFormParams(
                message="What is your name?", requested_schema=schema))
            return InputRequiredResult(input_requests={"user_name": ask}, request_state="s1")
        return f"Hello, {answer.content['name']}!"

    if __name__ == "__main__":
        if sys.argv[1] == "stdio":
            mcp.run()
        else:
            import uvicorn
            uvicorn.run(mcp.streamable_http_app(), host="127.0.0.1", port=int(sys.argv[2]),
                        log_level="warning")
    '''
)


@pytest.fixture(autouse=True)
def fresh_era_cache() -> Iterator[None]:
    era_module.ERAS.clear()
    yield
    era_module.ERAS.clear()


@pytest.fixture
def official(tmp_path: Path) -> list[str]:
    script = tmp_path / "official_server.py"
    script.write_text(OFFICIAL)
    return [sys.executable, str(script), "stdio"]


async def elicit(params: Any) -> dict[str, Any]:
    return {"action": "accept", "content": {"name": "Ada"}}


def text(result: Any) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


# -- the official SDK ------------------------------------------------------------------------


async def test_official_server_is_found_modern_and_asks_through_input_required(
    official: list[str],
) -> None:
    async with Client(official, elicitation=elicit, timeout=20) as client:
        assert client.era == "per-request"
        assert client.protocol_version == "2026-07-28"
        assert client.server_info["name"] == "official-modern"
        assert client.supports("tools")
        names = {tool.name for tool in await client.list_all_tools()}
        assert {"add", "greet", "greet_raw"} <= names
        assert text(await client.call_tool("add", {"a": 2, "b": 40})) == "42"
        assert text(await client.call_tool("greet", {})) == "Hello, Ada!"
        assert text(await client.call_tool("greet_raw", {})) == "Hello, Ada!"
        await client.ping()
        await client.set_logging_level("debug")
        assert text(await client.call_tool("add", {"a": 1, "b": 1})) == "2"


async def test_official_server_pinned_legacy_asks_mid_call_with_the_same_handler(
    official: list[str],
) -> None:
    async with Client(official, elicitation=elicit, mode="handshake", timeout=20) as client:
        assert client.era == "handshake"
        assert client.protocol_version == "2025-11-25"
        assert text(await client.call_tool("greet", {})) == "Hello, Ada!"


async def test_official_server_pinned_modern(official: list[str]) -> None:
    async with Client(official, mode="2026-07-28", timeout=20) as client:
        assert client.era == "per-request"
        assert text(await client.call_tool("add", {"a": 1, "b": 2})) == "3"


# -- our own server over stdio ---------------------------------------------------------------


async def test_our_demo_server_over_stdio_is_modern_and_asks_through_input_required() -> None:

    async def sample(params: Any) -> dict[str, Any]:
        return {"role": "assistant", "content": {"type": "text", "text": "blue"}, "model": "m"}

    async with Client(
        [sys.executable, str(DEMO)], sampling=sample, roots=["file:///tmp"], timeout=20
    ) as client:
        assert client.era == "per-request"
        assert client.server_info["name"]
        assert text(await client.call_tool("add", {"a": 1, "b": 2})) == "3"
        assert text(await client.call_tool("ask_model", {"question": "sky?"})) == "blue"
        roots = await client.call_tool("roots", {})
        assert "file:///tmp" in str(roots.structured_content)


# -- a handshake-only server -----------------------------------------------------------------


async def test_everything_over_stdio_falls_back_to_initialize() -> None:
    argv = [*npm_command("mcp-server-everything"), "stdio"]
    async with Client(argv, env=node_env(), timeout=30) as client:
        assert client.era == "handshake"
        assert client.protocol_version == "2025-11-25"
        result = await client.call_tool("get-sum", {"a": 2, "b": 3})
        assert "5" in text(result)
        await client.ping()
    key = era_module.server_key(argv)
    assert key is not None
    assert era_module.ERAS[key] == "handshake"


async def test_everything_refuses_a_client_pinned_to_the_modern_era() -> None:
    argv = [*npm_command("mcp-server-everything"), "stdio"]
    with pytest.raises(EraMismatch, match="does not speak it"):
        async with Client(argv, env=node_env(), mode="2026-07-28", timeout=30):
            pass


async def test_official_server_acknowledges_a_listen_and_it_ends_cleanly(
    official: list[str],
) -> None:
    async with Client(official, timeout=20) as client:
        async with client.listen(tools=True, resource_uris=["file:///x"]) as sub:
            assert sub.acknowledged == {
                "toolsListChanged": True,
                "resourceSubscriptions": ["file:///x"],
            }
        assert text(await client.call_tool("add", {"a": 1, "b": 2})) == "3"  # still fine
