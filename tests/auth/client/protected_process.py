"""A protected MCP server and its authorization server in one process, for the CLI tests.

    python tests/auth/client/protected_process.py

Prints one line, `MCP_URL AUTH_URL`, once both listen on 127.0.0.1, then serves until killed.
"""

from __future__ import annotations

import asyncio
import socket
import sys
from pathlib import Path

import uvicorn

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.auth.client.fixtures import AuthServer, Protected
from tests.auth.client.test_flow import make_server


def bound() -> socket.socket:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    return sock


async def main() -> None:
    auth = AuthServer()
    app = Protected(make_server().http_app(), auth)
    auth_socket, app_socket = bound(), bound()
    auth.base = f"http://127.0.0.1:{auth_socket.getsockname()[1]}"
    app.base = f"http://127.0.0.1:{app_socket.getsockname()[1]}"
    servers = [
        uvicorn.Server(uvicorn.Config(a, log_level="warning", lifespan="off")) for a in (auth, app)
    ]
    tasks = [
        asyncio.create_task(s.serve(sockets=[sock]))
        for s, sock in zip(servers, (auth_socket, app_socket), strict=True)
    ]
    while not all(s.started for s in servers):
        await asyncio.sleep(0.01)
    print(app.base + "/mcp", auth.base, flush=True)
    await asyncio.gather(*tasks)


if __name__ == "__main__":
    asyncio.run(main())
