"""A server of another SDK whose tool asks the user (elicitation): `fastmcp` (FastMCP 4.1.6)
or `sdk` (the official SDK's MCPServer, mcp 2.3.0), run with tests/peers.py's fastmcp_python.
Both negotiate 2026-07-28 with an auto client, where their elicitation fails, each in its own
words; in the handshake era it works."""

import sys

from pydantic import BaseModel


class Charts(BaseModel):
    charts: bool


def fastmcp_server() -> object:
    from fastmcp import Context, FastMCP

    server = FastMCP("fastmcp-ask")

    @server.tool
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit("Include charts?", Charts)
        return f"answer: {answer.action}"

    return server


def sdk_server() -> object:
    from mcp.server.mcpserver import Context, MCPServer

    server = MCPServer("sdk-ask")

    @server.tool()
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit("Include charts?", Charts)
        return f"answer: {answer.action}"

    return server


if __name__ == "__main__":
    if sys.argv[1] == "fastmcp":
        fastmcp_server().run(show_banner=False)
    else:
        sdk_server().run()
