"""W8: the official SDK's (mcp==2.3.0) `add` server over Streamable HTTP on uvicorn (one worker,
asyncio loop, httptools unless BENCH_UVICORN_HTTP=h11). Run with bench/.venv-official/bin/python.

    python official_add_http.py MODE PORT     MODE: modern

MCPServer has no separate modern app: `streamable_http_app()` routes a POST whose
`MCP-Protocol-Version` header is not a handshake-era version (here 2026-07-28) to its
single-exchange entry (`mcp.server._streamable_http_modern.handle_modern_request`), no session
and no initialize. `json_response=True` answers it in the ASGI task as `application/json` (the
default SSE mode runs the handler in a sibling task and still answers JSON when it sends
nothing first). `stateless_http` only affects handshake-era requests.
"""

import os
import sys

import uvicorn
from mcp.server.mcpserver import MCPServer

server = MCPServer("bench-add", version="1.0.0")

# uvicorn's HTTP parser, the same for every system: "httptools" (C, what uvicorn[standard] and
# mcpkit[http] install) or "h11" (pure Python).
HTTP_PARSER = os.environ.get("BENCH_UVICORN_HTTP", "httptools")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


if __name__ == "__main__":
    mode, port = sys.argv[1], int(sys.argv[2])
    if mode != "modern":
        sys.exit(f"official_add_http.py serves only the modern mode, not {mode!r}")
    app = server.streamable_http_app(json_response=True, stateless_http=True)
    uvicorn.run(
        app, host="127.0.0.1", port=port, loop="asyncio", http=HTTP_PARSER, log_level="warning"
    )
