"""An echo server that takes SECONDS (argv[1]) to start, like one that loads a model or
connects to a database first; then speaks MCP over stdio (bench/host_connect.py)."""

import sys
import time

from mcpkit import Server

time.sleep(float(sys.argv[1]))
server = Server("slow-start", version="1.0.0")


@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


if __name__ == "__main__":
    server.run()
