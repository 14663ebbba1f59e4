"""A server for the `--workers N` drain tests, whose calls are held across processes: `hold`
counts itself in Redis ($DRAIN_TEST_REDIS, under `drain-test:`, per worker process) and waits
there until the test releases it; `worker` names the worker process that took the request
(so does `hold`'s answer)."""

import os

import redis.asyncio as redis

from mcpkit import Server

server = Server("drain-workers")
HELD, RELEASE = "drain-test:held", "drain-test:release"


@server.tool()
async def hold() -> str:
    """Held until the test pushes one item on the release list."""
    client = redis.Redis.from_url(os.environ["DRAIN_TEST_REDIS"])
    try:
        await client.hincrby(HELD, serving_worker(), 1)
        await client.blpop([RELEASE])
    finally:
        await client.aclose()
    return serving_worker()


@server.tool()
def worker() -> str:
    return serving_worker()


def serving_worker() -> str:
    """The process id of the worker serving HTTP: this process, or, behind `mcpkit proxy`
    (which starts this server on stdio, per session), its parent."""
    return str(os.getppid() if os.environ.get("DRAIN_TEST_BEHIND_PROXY") else os.getpid())
