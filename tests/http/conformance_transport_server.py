"""A server for the conformance suite's transport scenarios; the port is argv[1].

`test_reconnection` closes its SSE stream mid-call (2025-11-25 polling, SEP-1699): the client
resumes with GET and Last-Event-ID and receives the answer there.
"""

import asyncio
import sys

from mcpkit import Server
from mcpkit.server import Context

server = Server("conformance-transport")


@server.tool()
async def test_reconnection(ctx: Context) -> str:
    """Close the stream before answering."""
    await asyncio.sleep(0.05)
    ctx.session.transport.close_sse_stream(ctx.request_id)  # type: ignore[attr-defined]
    await asyncio.sleep(0.2)
    return "reconnected"


@server.tool()
def test_simple_text() -> str:
    """A simple text answer."""
    return "This is a simple text response for testing."


if __name__ == "__main__":
    server.run(transport="http", port=int(sys.argv[1]))
