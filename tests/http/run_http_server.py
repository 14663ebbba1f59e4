"""`server.run(transport="http")` in a process of its own; the port is argv[1]."""

import sys

from mcpkit import Server

server = Server("run-http")


@server.tool()
def hello() -> str:
    return "hi"


if __name__ == "__main__":
    # argv[2] "http-sse": also the legacy HTTP+SSE transport
    server.run(transport="http", port=int(sys.argv[1]), http_sse=sys.argv[2:] == ["http-sse"])
