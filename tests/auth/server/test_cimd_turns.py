"""A flood of slow Client ID Metadata Documents does not hold up other people's logins
(issue 22, item 17).

The attacker's documents are served on 127.0.0.2 by a server that answers nothing until the
test ends; the legitimate client's document by the usual document server on 127.0.0.1. A
login with that client must finish while the attacker's fetches are still hanging: before,
every fetch queued for one of 8 slots outside its timeout, and the login waited until the
attacker's fetches had timed out, round after round.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx

from mcpkit.auth.server import CIMDOptions
from mcpkit.auth.server.fetch import CONCURRENT_FETCHES, FETCHES_PER_HOST, QUEUED_PER_HOST
from tests.http.servers import serving

from .support import Flow, Running, redirected_to, running
from .test_cimd import DocumentServer, documents  # noqa: F401 (a fixture)

SLOW_DOCUMENTS = 24
TIMEOUT = 3.0
POLICY = CIMDOptions(allowed_networks=("127.0.0.0/8",), allow_http=True, timeout=TIMEOUT)


class Hanging:
    """Answers no request until `release` is set; counts the requests it holds."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.held = 0
        self.changed = asyncio.Condition()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        async with self.changed:
            self.held += 1
            self.changed.notify_all()
        await self.release.wait()
        await send({"type": "http.response.start", "status": 404, "headers": []})
        await send({"type": "http.response.body", "body": b""})


@contextlib.asynccontextmanager
async def hanging_server() -> AsyncIterator[tuple[str, Hanging]]:
    """The attacker's document server, on 127.0.0.2 (another host than 127.0.0.1)."""
    app = Hanging()
    async with serving(app, host="127.0.0.2") as url:
        try:
            yield url, app
        finally:
            app.release.set()  # let the held requests end before the server stops


async def login(run: Running, client_id: str) -> None:
    flow = Flow(client_id=client_id)
    _, params = redirected_to(await run.http.get("/authorize", params=flow.query()))
    tokens = await run.http.post("/token", data=flow.token_form(params["code"]))
    assert tokens.status_code == 200, tokens.text


async def test_slow_documents_do_not_delay_a_legitimate_login(
    documents: DocumentServer,  # noqa: F811
) -> None:
    async with hanging_server() as (slow, hanging), running(cimd=POLICY) as run:
        attacks = [
            asyncio.create_task(run.http.get("/authorize", params=Flow(client_id=url).query()))
            for url in (f"{slow}/client-{i}.json" for i in range(SLOW_DOCUMENTS))
        ]
        async with hanging.changed:  # the attacker's host holds all the turns it can get
            await hanging.changed.wait_for(lambda: hanging.held >= FETCHES_PER_HOST)
        started = time.monotonic()
        await login(run, f"{documents.base}/good.json")
        took = time.monotonic() - started
        # Finished while the attacker's fetches still hang: no waiting on them at all.
        assert sum(not attack.done() for attack in attacks) >= FETCHES_PER_HOST, took
        assert took < TIMEOUT, took
        answers = await asyncio.gather(*attacks)
    texts = [answer.text for answer in answers]
    assert all(answer.status_code == 400 for answer in answers)
    turned_away = sum("too many documents from this host" in text for text in texts)
    assert turned_away == SLOW_DOCUMENTS - FETCHES_PER_HOST - QUEUED_PER_HOST
    timed_out = sum("took too long" in text or "in time" in text for text in texts)
    assert timed_out == FETCHES_PER_HOST + QUEUED_PER_HOST


async def test_the_wait_for_a_turn_counts_within_the_timeout() -> None:
    async with hanging_server() as (slow, hanging), running(cimd=POLICY) as run:

        async def timed(i: int) -> tuple[float, httpx.Response]:
            started = time.monotonic()
            response = await run.http.get(
                "/authorize", params=Flow(client_id=f"{slow}/c{i}.json").query()
            )
            return time.monotonic() - started, response

        first = [asyncio.create_task(timed(i)) for i in range(CONCURRENT_FETCHES)]
        async with hanging.changed:
            await hanging.changed.wait_for(lambda: hanging.held >= FETCHES_PER_HOST)
        queued = [asyncio.create_task(timed(i)) for i in range(CONCURRENT_FETCHES, 10)]
        results = await asyncio.gather(*first, *queued)
    assert all(response.status_code == 400 for _, response in results)
    # Before, a queued fetch waited for its turn (until the first ones timed out) and then
    # had its whole timeout again to fetch: about twice TIMEOUT.
    took = [seconds for seconds, _ in results]
    assert all(seconds < TIMEOUT * 1.5 for seconds in took), took
