"""`server.run(transport="http")` with uvicorn's own text logs at `info` (access lines on):
`python access_log_server.py --port P`."""

import sys

from mcpkit import Server

server = Server("access-log")


@server.tool()
def hello() -> str:
    return "hi"


if __name__ == "__main__":
    server.run(transport="http", port=int(sys.argv[sys.argv.index("--port") + 1]), log_level="info")
