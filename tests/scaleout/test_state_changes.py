"""Two workers in this process sharing one Redis, each with its own rate limit and request
log: a change a client makes to its session on one worker (its log level, a subscription)
reaches the other worker's copy as data. Only the worker the client sent it to serves it:
nothing is charged or logged twice, and the change is in effect on the other worker."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx

from mcpkit import Context, Server
from mcpkit.server.middleware import RateLimit, RequestLogging
from mcpkit.transports.http.redis_state import RedisState
from tests.http.servers import serving
from tests.scaleout.test_faults import (  # noqa: F401 - fault_redis: the fixture, shared
    BOUND,
    PASSWORD,
    FaultRedis,
    fault_redis,
    workers,
)
from tests.scaleout.test_resumption import open_session

CHANGES = {"logging/setLevel", "resources/subscribe"}


class Lines(logging.Handler):
    """The messages of the records it is given."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def worker(name: str) -> tuple[Server, Lines]:
    """A worker's server: requests logged to its own logger, and at most two changes of a
    session's state (setLevel, subscribe) allowed an hour, counted in this worker."""
    lines = Lines()
    logger = logging.getLogger(f"tests.state-changes.{name}")
    logger.setLevel(logging.INFO)
    logger.addHandler(lines)
    server = Server("state-changes")
    server.add_middleware(RequestLogging(logger))
    server.add_middleware(RateLimit(1 / 3600, burst=2, per="global", methods=CHANGES))

    @server.tool()
    async def chatter(ctx: Context) -> str:
        await ctx.debug("a debug line")
        await ctx.warning("a warning line")
        return name

    @server.tool()
    def touch(uri: str) -> int:
        return server.resources.notify_updated(uri)

    @server.resource("data://note")
    def note() -> str:
        return "a note"

    return server, lines


def request(request_id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def served(lines: Lines, method: str) -> int:
    return sum(f" {method}" in line for line in lines.lines)


async def logs_warnings_only(http: httpx.AsyncClient, url: str, headers: dict[str, str]) -> None:
    """Until the worker at `url` serves the session at log level warning (bounded): a
    change made elsewhere reaches it through the bus, soon after its answer."""
    chatter = request(6, "tools/call", {"name": "chatter", "arguments": {}})
    for _ in range(200):
        logged = (await http.post(url, json=chatter, headers=headers)).text
        if "a warning line" in logged and "a debug line" not in logged:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the log level set on the other worker does not hold here")


@contextlib.asynccontextmanager
async def get_stream(
    http: httpx.AsyncClient, url: str, headers: dict[str, str]
) -> AsyncIterator[AsyncIterator[str]]:
    """The session's GET stream at `url`, as its lines."""
    get = {**headers, "accept": "text/event-stream"}
    async with http.stream("GET", url, headers=get) as response:
        assert response.status_code == 200
        yield response.aiter_lines()


async def test_a_change_made_on_one_worker_is_served_there_only_and_holds_on_the_other(
    redis_url: str,
) -> None:
    (a_server, a_log), (b_server, b_log) = worker("a"), worker("b")
    a_app = a_server.http_app(state=RedisState(redis_url, prefix="state-changes:"))
    b_app = b_server.http_app(state=RedisState(redis_url, prefix="state-changes:"))
    async with serving(a_app) as a, serving(b_app) as b, httpx.AsyncClient(timeout=10) as http:
        headers = await open_session(http, a + "/mcp")
        listed = await http.post(b + "/mcp", json=request(2, "tools/list", {}), headers=headers)
        assert listed.is_success  # b holds a copy of the session from now on
        set_level = request(3, "logging/setLevel", {"level": "warning"})
        subscribe = request(4, "resources/subscribe", {"uri": "data://note"})
        for body in (set_level, subscribe):
            assert (await http.post(a + "/mcp", json=body, headers=headers)).is_success
        await logs_warnings_only(http, b + "/mcp", headers)

        assert [served(a_log, method) for method in sorted(CHANGES)] == [1, 1]
        assert [served(b_log, method) for method in sorted(CHANGES)] == [0, 0]
        # b's limit is untouched: the client's own two changes there are allowed
        again = request(5, "logging/setLevel", {"level": "warning"})
        assert "error" not in (await http.post(b + "/mcp", json=again, headers=headers)).text

        async with get_stream(http, b + "/mcp", headers) as lines:
            touch = request(7, "tools/call", {"name": "touch", "arguments": {"uri": "data://note"}})
            told = await http.post(b + "/mcp", json=touch, headers=headers)
            assert '"text":"1"' in told.text  # b's copy of the session is subscribed

            async def updated() -> str:
                async for line in lines:
                    if "notifications/resources/updated" in line:
                        return line
                raise AssertionError("the GET stream ended")

            assert "data://note" in await asyncio.wait_for(updated(), 10)


async def test_a_change_that_cannot_be_shared_is_answered_with_an_error_and_logged_once(
    fault_redis: FaultRedis,  # noqa: F811 - the imported fixture
    tmp_path: Path,
) -> None:
    """Redis stops after the session's copy was checked: the client's setLevel is answered
    with an error (the other workers cannot know it), not a success; the log says so once."""
    log = tmp_path / "workers.log"
    with workers(fault_redis.url, 1, log) as [(url, _)]:
        async with httpx.AsyncClient(timeout=30) as http:
            headers = await open_session(http, url)
            fault_redis.stop()
            set_level = request(2, "logging/setLevel", {"level": "warning"})
            started = time.monotonic()
            answer = await http.post(url, json=set_level, headers=headers)
            assert time.monotonic() - started < BOUND
    print(f"setLevel, Redis stopped: {answer.status_code} {answer.text}")
    error = answer.json()["error"]
    assert error["code"] == -32603
    assert "the session store is unavailable (Redis: " in error["message"]
    text = log.read_text()
    assert text.count("a session change was not shared") == 1
    assert PASSWORD not in text + answer.text
