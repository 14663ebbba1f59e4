"""A FastMCP 4.1.6 server (run by tests/peers.py: fastmcp_python) with one tool."""

from fastmcp import FastMCP

mcp = FastMCP("fm")


@mcp.tool
def add(a: int, b: int) -> int:
    return a + b


if __name__ == "__main__":
    mcp.run(show_banner=False)
