"""`ctx.read_resource` returns a `ReadResourceResult` model, as the client's `read_resource`
does (issue 23: results in one style; it was the wire dict). Dict reads still answer for one
release, each with a DeprecationWarning at the handler's line."""

from __future__ import annotations

import pytest

from mcpkit import Client, Server
from mcpkit.server import Context
from mcpkit.types import ReadResourceResult, TextResourceContents


async def test_a_handler_reads_its_own_resource_as_the_model_the_client_gets() -> None:
    server = Server("own")
    server.add_resource("memo://a", "alpha")
    seen: list[ReadResourceResult] = []

    @server.tool()
    async def read(ctx: Context) -> str:
        result = await ctx.read_resource("memo://a")
        seen.append(result)
        with pytest.warns(DeprecationWarning, match=r"\['contents'\].*ReadResourceResult") as w:
            old = result["contents"][0]["text"]  # type: ignore[index]
        assert w[0].filename == __file__
        return old

    async with Client(server) as client:
        called = await client.call_tool("read")
        direct = await client.read_resource("memo://a")
    assert called.content[0].text == "alpha"  # type: ignore[union-attr]
    assert isinstance(seen[0], ReadResourceResult)
    assert seen[0].contents == direct.contents  # type: ignore[union-attr]
    assert isinstance(seen[0].contents[0], TextResourceContents)
