"""What is made for a session's GET stream while no worker holds that stream reaches the client
at its resume, once: three workers on one Redis; the session subscribes on the second and
holds its GET stream on the first, which is killed, stopped or left by the client; an update is
made on the second; the client's GET with `Last-Event-ID` on the third gets it, exactly once."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis.asyncio

from tests.scaleout.test_bus import call
from tests.scaleout.test_faults import Worker, workers
from tests.scaleout.test_resumption import Event, events, open_session

UPDATED = "notifications/resources/updated"


class Reader:
    """The events of an SSE response, one at a time as they arrive (comments skipped)."""

    def __init__(self, response: httpx.Response) -> None:
        self._chunks: AsyncIterator[str] = response.aiter_text()
        self._buffer = ""

    async def next(self) -> Event:
        return await asyncio.wait_for(self._next(), 10)

    async def _next(self) -> Event:
        while True:
            while "\n\n" not in self._buffer:
                self._buffer += (await anext(self._chunks)).replace("\r\n", "\n")
            block, self._buffer = self._buffer.split("\n\n", 1)
            found = events(block + "\n\n")
            if found:
                return found[0]


async def stored(url: str, session_id: str, wanted: dict[str, int]) -> None:
    """Until the session's stored events hold, for each kind ("made" by a worker that does
    not hold the GET stream, "sent" by the one that does), that many updates (bounded)."""
    client = redis.asyncio.Redis.from_url(url)
    try:
        for _ in range(500):
            found = {"made": 0, "sent": 0}
            for _, fields in await client.xrange(f"mcpkit:http:events:{session_id}"):
                if UPDATED.encode() in fields[b"d"]:
                    found["made" if b"m" in fields else "sent"] += 1
            if all(found[kind] >= count for kind, count in wanted.items()):
                return
            await asyncio.sleep(0.02)
        raise AssertionError(f"never stored: {wanted}; stored: {found}")
    finally:
        await client.aclose()


async def stop(holder: Worker, how: str) -> None:
    """End the worker holding the GET stream (SIGKILL, or SIGTERM as a rolling update does),
    and wait until it is gone; "lives": leave it."""
    if how == "lives":
        return
    holder.send_signal(signal.SIGKILL if how == "SIGKILL" else signal.SIGTERM)
    await asyncio.to_thread(holder.wait, 20)


def subscribe(request_id: int, uri: str) -> dict[str, Any]:
    params = {"uri": uri}
    return {"jsonrpc": "2.0", "id": request_id, "method": "resources/subscribe", "params": params}


@pytest.mark.parametrize("how", ["SIGKILL", "SIGTERM", "lives"])
@pytest.mark.parametrize("copy", [True, False], ids=["copy-on-maker", "no-copy-on-maker"])
async def test_an_update_made_after_the_get_stream_s_worker_ended_resumes_on_a_third_once(
    redis_url: str, tmp_path: Path, how: str, copy: bool
) -> None:
    """The first update is sent live by the holder; then the holder is killed (or stopped,
    or the client leaves its stream and it lives on); the second update, made on the second
    worker (where the session subscribed, or which never saw it), comes once at the resume
    on the third, and the first does not come again."""
    uri = f"notes://holder-{how}-{copy}"
    with workers(redis_url, 3, tmp_path / "workers.log") as started:
        (holder, holder_process), (maker, _), (third, _) = started
        home = maker if copy else holder  # where the session is opened and subscribes
        async with httpx.AsyncClient(timeout=10) as http:
            headers = await open_session(http, home)
            toucher = headers if copy else await open_session(http, maker)
            session_id = headers["mcp-session-id"]
            assert (await http.post(home, json=subscribe(2, uri), headers=headers)).is_success
            async with http.stream("GET", holder, headers=headers) as response:
                live = Reader(response)
                await live.next()  # the priming event: the holder is the stream's home
                touch = call(3, "touch", uri=uri)
                assert (await http.post(maker, json=touch, headers=toucher)).is_success
                last_id, first = await live.next()
                assert first is not None and first["method"] == UPDATED and last_id is not None
                await stored(redis_url, session_id, {"sent": 1})  # the holder stored it
                await stop(holder_process, how)

            told = await http.post(maker, json=call(4, "touch", uri=uri), headers=toucher)
            assert told.status_code == 200 and f'"text":"{int(copy)}"' in told.text
            # made by the second worker; sent (kept) by the holder too when it lives
            await stored(redis_url, session_id, {"made": 2, "sent": 2 if how == "lives" else 1})

            resume = dict(headers, **{"last-event-id": last_id})
            async with http.stream("GET", third, headers=resume) as response:
                assert response.status_code == 200
                resumed, replayed = Reader(response), []
                end = call(5, "announce", text="the end")  # sent live, after any replay
                assert (await http.post(maker, json=end, headers=headers)).is_success
                while True:
                    _, data = await resumed.next()
                    if data is not None and data["method"] == "notifications/message":
                        break
                    replayed.append(data)
            assert (await http.delete(third, headers=headers)).status_code == 200
    assert replayed == [None, {"jsonrpc": "2.0", "method": UPDATED, "params": {"uri": uri}}]
