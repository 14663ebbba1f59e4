"""10,000 idle handshake-era sessions opened on two Redis-sharing workers do not grow them: the
sessions live in Redis, and a worker's copy of one is a cache dropped `cache_idle` after its
last use here.

Measured on the 2-core machine (2 workers, cache_idle 0.5 s, ~1,000 sessions/s over both):
each worker's RSS grows 9-11 MB from the baseline taken after 500 sessions, all of it while
the cache fills to its steady size (the copies made in the last ~0.6 s), and < 0.6 MB over the
second 5,000 sessions. Without dropping copies (cache_idle of an hour) the same run grows each
worker ~80 MB, ~40 MB over the second half. The bounds below sit between the two.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from collections.abc import AsyncIterator, Iterator

import orjson
import redis.asyncio

from tests.http.servers import unused_port, wait_until_listening
from tests.scaleout.conftest import processes

SESSIONS = 10_000
BASELINE_AFTER = 500
CONCURRENCY = 32
CACHE_IDLE = 0.5  # s: a worker drops its copy of a session unused this long
PREFIX = "memory:"
GROWTH_MB = 20.0  # from the baseline to 10,000 sessions (measured 9-11 MB)
SECOND_HALF_MB = 6.0  # from 5,000 to 10,000 sessions (measured < 0.6 MB; 40 MB if kept)

VERSION = "2025-11-25"
INIT = orjson.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "m"}},
    }
)
INITIALIZED = orjson.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})


class Connection:
    """One keep-alive HTTP/1.1 connection to a worker's /mcp, JSON answers only: an httpx
    client opening 10,000 sessions takes ~10x as long as the workers need to serve them."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, port: int):
        self.reader, self.writer, self.port = reader, writer, port

    @classmethod
    async def open(cls, port: int) -> Connection:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        return cls(reader, writer, port)

    async def post(
        self, body: bytes, session: str | None = None
    ) -> tuple[int, dict[str, str], bytes]:
        head = [
            "POST /mcp HTTP/1.1",
            f"Host: 127.0.0.1:{self.port}",
            "Content-Type: application/json",
            "Accept: application/json, text/event-stream",
            f"MCP-Protocol-Version: {VERSION}",
            f"Content-Length: {len(body)}",
        ]
        if session is not None:
            head.append(f"Mcp-Session-Id: {session}")
        self.writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + body)
        lines = (await self.reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        size = int(headers.get("content-length", "0"))
        return int(lines[0].split()[1]), headers, await self.reader.readexactly(size)

    async def session(self) -> str:
        """initialize: the new session's id."""
        status, headers, body = await self.post(INIT)
        assert status == 200, body
        return headers["mcp-session-id"]

    async def initialized(self, session: str) -> None:
        status, _, body = await self.post(INITIALIZED, session)
        assert status == 202, body

    async def call(self, session: str, tool: str) -> str:
        message = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": tool}}
        status, _, body = await self.post(orjson.dumps(message), session)
        assert status == 200, body
        text: str = orjson.loads(body)["result"]["content"][0]["text"]
        return text

    def close(self) -> None:
        self.writer.close()


@contextlib.contextmanager
def two_workers(redis_url: str) -> Iterator[list[int]]:
    ports = [unused_port(), unused_port()]
    worker = [sys.executable, "-m", "tests.scaleout.memory_worker"]
    with processes([[*worker, str(p), redis_url, PREFIX, str(CACHE_IDLE)] for p in ports]):
        for port in ports:
            wait_until_listening(f"http://127.0.0.1:{port}/mcp", 20)
        yield ports


@contextlib.asynccontextmanager
async def connections(ports: list[int]) -> AsyncIterator[list[Connection]]:
    opened = [await Connection.open(port) for port in ports]
    try:
        yield opened
    finally:
        for connection in opened:
            connection.close()


async def open_sessions(ports: list[int], first: int, count: int) -> None:
    """Sessions number `first` to `first + count - 1`, CONCURRENCY at a time: initialize on
    one worker, notifications/initialized on the same one or the other (both paths)."""
    numbers = iter(range(first, first + count))

    async def client() -> None:
        async with connections(ports) as conns:
            for number in numbers:
                session = await conns[number % 2].session()
                await conns[(number // 2) % 2].initialized(session)

    await asyncio.gather(*(client() for _ in range(CONCURRENCY)))


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmRSS for {pid}")


class Asker:
    """One session on each worker, kept, to ask it things (which process it is, how many
    session copies it holds: this session's own among them). A new connection per question:
    uvicorn closes one idle for 5 s."""

    def __init__(self, ports: list[int], sessions: list[str]) -> None:
        self.ports, self.sessions = ports, sessions

    @classmethod
    async def open(cls, ports: list[int]) -> Asker:
        async with connections(ports) as conns:
            sessions = [await conn.session() for conn in conns]
            for conn, session in zip(conns, sessions, strict=True):
                await conn.initialized(session)
        return cls(ports, sessions)

    async def ask(self, tool: str) -> list[str]:
        async with connections(self.ports) as conns:
            pairs = zip(conns, self.sessions, strict=True)
            return [await conn.call(session, tool) for conn, session in pairs]

    async def copies_dropped(self) -> list[str]:
        """Each worker's count of copies, polled until only this session's own is left
        (or 30 s)."""
        deadline = time.monotonic() + 30
        while (counts := await self.ask("copies")) != ["1", "1"]:
            if time.monotonic() > deadline:
                break
            await asyncio.sleep(CACHE_IDLE / 4)
        return counts


async def test_ten_thousand_idle_sessions_do_not_grow_the_workers(redis_url: str) -> None:
    with two_workers(redis_url) as ports:
        workers = await Asker.open(ports)
        pids = [int(pid) for pid in await workers.ask("which_worker")]
        await open_sessions(ports, 0, BASELINE_AFTER)
        baseline = [rss_mb(pid) for pid in pids]
        await open_sessions(ports, BASELINE_AFTER, SESSIONS // 2 - BASELINE_AFTER)
        half = [rss_mb(pid) for pid in pids]
        await open_sessions(ports, SESSIONS // 2, SESSIONS // 2)
        full = [rss_mb(pid) for pid in pids]

        store = redis.asyncio.Redis.from_url(redis_url)
        try:
            # every session is in Redis (and the 2 that ask the workers)
            assert await store.zcard(f"{PREFIX}sessions") == SESSIONS + 2
        finally:
            await store.aclose()
        growth = [end - start for start, end in zip(baseline, full, strict=True)]
        second_half = [end - start for start, end in zip(half, full, strict=True)]
        assert max(growth) < GROWTH_MB, (baseline, half, full)
        assert max(second_half) < SECOND_HALF_MB, (baseline, half, full)
        # idle for cache_idle: no worker holds a copy but the asking session's own
        assert await workers.copies_dropped() == ["1", "1"]
