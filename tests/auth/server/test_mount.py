"""Mounted beside an MCP endpoint in one app, as docs/authorization-server.md shows: the
requests for `auth.paths` reach the authorization server, everything else the MCP app, and
the MCP endpoint becomes the audience of the tokens."""

from __future__ import annotations

from typing import Any

import httpx

from mcpkit import Client, Server
from mcpkit.auth.server import AuthorizationServer
from tests.http.servers import unused_port

from .support import Flow, Running, introspect, options, serving, tokens_for


async def test_one_origin_serves_the_mcp_endpoint_and_the_authorization_server() -> None:
    port = unused_port()
    issuer = f"http://127.0.0.1:{port}"
    auth = AuthorizationServer(options(port, default_resource=f"{issuer}/mcp"))
    server = Server("beside")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    mcp_app = server.http_app()
    paths = frozenset(auth.paths)

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"] in paths:
            await auth(scope, receive, send)
        else:
            await mcp_app(scope, receive, send)

    async with serving(app, port) as url, httpx.AsyncClient(base_url=url) as http:
        metadata = (await http.get("/.well-known/oauth-authorization-server")).json()
        assert metadata["authorization_endpoint"] == f"{issuer}/authorize"
        run = Running(url, auth, http)
        tokens = await tokens_for(run, Flow(resource=None))
        assert (await introspect(run, tokens["access_token"]))["aud"] == f"{issuer}/mcp"
        async with Client(f"{url}/mcp") as client:
            result = await client.call_tool("add", {"a": 2, "b": 3})
            assert result.content[0].text == "5"  # type: ignore[union-attr]
    await auth.close()
