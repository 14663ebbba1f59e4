"""A worker for tests/scaleout/test_memory.py: tests/scaleout/app.py's server on uvicorn with a
RedisState whose copies are dropped after a short `cache_idle`, and one more tool, `copies`,
saying how many sessions this worker holds a copy of (the caller's own included).

    python -m tests.scaleout.memory_worker PORT REDIS PREFIX CACHE_IDLE
"""

from __future__ import annotations

import sys

import uvicorn

from mcpkit.transports.http.redis_state import RedisState
from tests.scaleout.app import server

if __name__ == "__main__":
    port, url, prefix, cache_idle = sys.argv[1:5]
    state = RedisState(url, prefix=prefix, cache_idle=float(cache_idle))
    # Long idle timeout and a cap above the test's sessions: they stay in Redis throughout.
    app = server.http_app(state=state, idle_timeout=3600, max_sessions=100_000)
    server.add_tool(lambda: len(app.sessions), name="copies")
    uvicorn.run(app, host="127.0.0.1", port=int(port), log_level="warning", lifespan="on")
