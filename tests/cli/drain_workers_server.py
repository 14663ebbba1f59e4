"""A server for the `--workers N` drain tests, whose calls are held across processes: `hold`
counts itself in Redis ($DRAIN_TEST_REDIS, under `drain-test:`, per worker process) and waits
there until the test releases it; `hello` answers at once."""

import os

import redis.asyncio as redis

from mcpkit import Server

server = Server("drain-workers")
HELD, RELEASE = "drain-test:held", "drain-test:release"


@server.tool()
async def hold() -> str:
    """Held until the test pushes one item on the release list; this worker's process id."""
    client = redis.Redis.from_url(os.environ["DRAIN_TEST_REDIS"])
    try:
        await client.hincrby(HELD, str(os.getpid()), 1)
        await client.blpop([RELEASE])
    finally:
        await client.aclose()
    return str(os.getpid())


@server.tool()
def hello() -> str:
    return "hi"
