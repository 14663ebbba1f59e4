"""A proxy worker for tests/gateway/test_upstream_expiry.py: `proxy(UPSTREAM, mode=
"handshake")` (or `gateway(...)` of an `mcpServers` file) over Streamable HTTP on a
`RedisState`, with a short idle timeout (the command line has no option for it).

    python -m tests.gateway.expiry_worker PORT REDIS UPSTREAM|CONFIG.json IDLE_TIMEOUT
"""

from __future__ import annotations

import sys

import uvicorn

from mcpkit.gateway import gateway, proxy
from mcpkit.transports.http.redis_state import RedisState

if __name__ == "__main__":
    port, redis, upstream, idle_timeout = sys.argv[1:5]
    made = gateway if upstream.endswith(".json") else proxy
    server = made(upstream, mode="handshake", timeout=20)
    state = RedisState(redis, prefix="expiry:")
    app = server.http_app(state=state, idle_timeout=float(idle_timeout))
    uvicorn.run(app, host="127.0.0.1", port=int(port), log_level="warning", lifespan="on")
