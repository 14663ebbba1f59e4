"""Mounted beside an MCP endpoint in one app, as docs/authorization-server.md shows: the
requests for `auth.paths` reach the authorization server, everything else the MCP app, and
the MCP endpoint becomes the audience of the tokens."""

from __future__ import annotations

from typing import Any

import httpx

from mcpkit import Client, Server
from mcpkit.auth.server import AuthorizationServer
from mcpkit.protocol.http import Refusal
from mcpkit.runtime.principal import Principal
from tests.clock import FakeClock
from tests.http.servers import unused_port

from .support import Flow, Running, introspect, options, running, serving, tokens_for


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


async def test_bearer_auth_reads_the_clock_the_tokens_were_stamped_with() -> None:
    clock = FakeClock(1_000_000.0)  # long ago by the wall clock
    async with running(clock=clock) as run:
        flow = Flow()
        assert flow.resource is not None
        access = (await tokens_for(run, flow))["access_token"]
        auth = run.server.bearer_auth(flow.resource)
        scope = {"type": "http", "query_string": b""}
        headers = {b"authorization": f"Bearer {access}".encode()}
        principal = await auth.authenticate(scope, headers)
        assert isinstance(principal, Principal) and principal.subject == "dev-user"
        clock.advance(run.server.options.access_token_ttl + 31)  # past exp and the leeway
        refused = await auth.authenticate(scope, headers)
        assert isinstance(refused, Refusal) and refused.status == 401
        assert "expired" in dict(refused.headers)[b"www-authenticate"].decode()
