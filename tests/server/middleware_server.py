"""A server with middleware, run by the middleware tests as a process.

`python middleware_server.py`: over stdio. `python middleware_server.py http [REDIS_URL] PORT`:
Streamable HTTP on 127.0.0.1:PORT; with REDIS_URL, a rate limit of 3 tools/call in all shared
by every process given that URL (the bucket barely refills: one token an hour).
"""

from __future__ import annotations

import sys
from typing import Any

from mcpkit import Server
from mcpkit.server.middleware import (
    CallNext,
    Middleware,
    MiddlewareContext,
    RateLimit,
    RedisBuckets,
)


class Stamp(Middleware):
    """Says on every tool result that it ran, in which era and with which session."""

    async def on_call_tool(self, mctx: MiddlewareContext, call_next: CallNext) -> Any:
        result = await call_next(mctx)
        session = "session" if mctx.session_id else "no session"
        stamp = f"stamped ({mctx.era.value}, {session})"
        return {**result, "content": [*result["content"], {"type": "text", "text": stamp}]}


def build(redis_url: str | None = None) -> Server:
    server = Server("middleware-server", middleware=[Stamp()])
    if redis_url is not None:
        buckets = RedisBuckets(redis_url, prefix="mcpkit-test:shared:")
        server.add_middleware(
            RateLimit(1 / 3600, burst=3, per="global", methods={"tools/call"}, buckets=buckets)
        )

    @server.tool()
    def echo(text: str) -> str:
        return text

    return server


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "http":
        redis = sys.argv[2] if len(sys.argv) == 4 else None
        build(redis).run("http", host="127.0.0.1", port=int(sys.argv[-1]), log_level="warning")
    else:
        build().run()
