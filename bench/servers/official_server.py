"""Echo server on the official MCP Python SDK (mcp==2.3.0), as its users write one.

Run with bench/.venv-official/bin/python; speaks MCP over stdio.
"""

from mcp.server.mcpserver import MCPServer

server = MCPServer("bench-echo", version="1.0.0")


@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


if __name__ == "__main__":
    server.run()  # stdio
