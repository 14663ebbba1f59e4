"""A proxy (or gateway) worker for tests/gateway/test_workers_home.py: over Streamable HTTP
on a `RedisState`, requiring a bearer token (`mcpkit proxy` has no option for one).

    python -m tests.gateway.home_worker PORT REDIS TARGET

TARGET: a configuration file (a gateway), else a command line (a proxy). Tokens: TOKENS.
"""

from __future__ import annotations

import sys

import uvicorn

from mcpkit.auth import BearerAuth, StaticTokenVerifier
from mcpkit.gateway import gateway, proxy
from mcpkit.runtime.principal import Principal
from mcpkit.transports.http.redis_state import RedisState

TOKENS = {"alice-token-0123456789": "alice", "mallory-token-0123456789": "mallory"}


def auth(port: int) -> BearerAuth:
    people = {token: Principal(who, "app", frozenset({"mcp"})) for token, who in TOKENS.items()}
    return BearerAuth(
        StaticTokenVerifier(people),
        resource=f"http://127.0.0.1:{port}/mcp",
        authorization_servers=("https://auth.example.com",),
        required_scopes=frozenset({"mcp"}),
    )


if __name__ == "__main__":
    port, redis, target = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    if target.endswith(".json"):
        server = gateway(target, mode="handshake", timeout=30)
    else:
        server = proxy(target, mode="handshake", timeout=30)
    app = server.http_app(state=RedisState(redis, prefix="home:"), auth=auth(port))
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
