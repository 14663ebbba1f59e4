"""W6/W7: the mcpkit echo server over Streamable HTTP on uvicorn (one worker, asyncio loop, h11).

python mcpkit_http.py MODE PORT     MODE: json | sse | stateless
"""

import os
import sys

import uvicorn

from mcpkit import Server

server = Server("bench-echo", version="1.0.0")

# uvicorn's HTTP parser, the same for every system: "httptools" (C, what uvicorn[standard] and
# mcpkit[http] install) or "h11" (pure Python).
HTTP_PARSER = os.environ.get("BENCH_UVICORN_HTTP", "httptools")


@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


if __name__ == "__main__":
    mode, port = sys.argv[1], int(sys.argv[2])
    if mode == "stateless":
        app = server.http_app(stateless=True, response_mode="json")
    else:
        app = server.http_app(response_mode=mode)
    uvicorn.run(
        app, host="127.0.0.1", port=port, loop="asyncio", http=HTTP_PARSER, log_level="warning"
    )
