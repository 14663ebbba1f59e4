"""A dropped SSE stream resumed on the other worker: the events live in Redis, so a GET with
`Last-Event-ID` through haproxy gets, on a worker that never saw the request, every event
that followed, exactly once and in order."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import redis.asyncio

from tests.scaleout.conftest import Cluster

VERSION = "2025-11-25"
ACCEPT = "application/json, text/event-stream"


def events(text: str) -> list[tuple[str | None, dict[str, Any] | None]]:
    """(id, JSON data) of each SSE event in `text` (data None: a priming event)."""
    found = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if "id" in fields or "data" in fields:
            data = fields.get("data")
            found.append((fields.get("id"), json.loads(data) if data else None))
    return found


async def open_session(http: httpx.AsyncClient, url: str) -> dict[str, str]:
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "t"}},
    }
    answer = await http.post(url, json=init, headers={"accept": ACCEPT})
    headers = {
        "accept": ACCEPT,
        "mcp-session-id": answer.headers["mcp-session-id"],
        "mcp-protocol-version": VERSION,
    }
    done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (await http.post(url, json=done, headers=headers)).status_code == 202
    return headers


async def stored_answer(redis_url: str, session_id: str, request_id: int) -> None:
    """Until the request's answer is in the session's stored events (bounded)."""
    client = redis.asyncio.Redis.from_url(redis_url)
    try:
        for _ in range(500):
            entries = await client.xrange(f"mcpkit:http:events:{session_id}")
            if any(b'"id":%d,"result"' % request_id in e[b"d"] for _, e in entries):
                return
            await asyncio.sleep(0.02)
        raise AssertionError("the answer never reached Redis")
    finally:
        await client.aclose()


Event = tuple[str | None, dict[str, Any] | None]


async def drop_after_first_progress(
    http: httpx.AsyncClient, url: str, headers: dict[str, str], count: int, pause: float
) -> tuple[list[Event], str]:
    """POST a `steps` call (id 2) and drop its SSE stream at the first progress event: the
    events seen, and the worker that answered (haproxy's X-Worker, "" straight to one)."""
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {
            "name": "steps",
            "arguments": {"count": count, "pause": pause},
            "_meta": {"progressToken": "p"},
        },
    }
    seen: list[Event] = []
    async with http.stream("POST", url, json=call, headers=headers) as response:
        producer = response.headers.get("x-worker", "")
        buffer = ""
        async for chunk in response.aiter_text():
            buffer += chunk
            seen = events(buffer)
            if any(data is not None for _, data in seen):
                break  # the first progress event: drop the stream here
    return seen, producer


async def test_a_dropped_post_stream_resumes_on_the_other_worker(cluster: Cluster) -> None:
    async with httpx.AsyncClient(timeout=10) as http:
        headers = await open_session(http, cluster.url)
        seen, producer = await drop_after_first_progress(http, cluster.url, headers, 4, 0.2)
        [first] = [data for _, data in seen if data is not None]
        assert first["params"]["progress"] == 1
        last_id = seen[-1][0]
        assert last_id is not None

        await stored_answer(cluster.redis, headers["mcp-session-id"], 2)
        resume = dict(headers, **{"last-event-id": last_id})
        for _ in range(4):  # round robin: at most a few tries land on the other worker
            replayed = await http.get(cluster.url, headers=resume)
            if replayed.headers["x-worker"] != producer:
                break
        assert replayed.status_code == 200 and replayed.headers["x-worker"] != producer
        assert (await http.delete(cluster.url, headers=headers)).status_code == 200

    rest = events(replayed.text)
    ids = [eid for eid, _ in rest if eid is not None]
    assert len(ids) == len(set(ids)) and not set(ids) & {eid for eid, _ in seen}
    messages = [data for _, data in rest if data is not None]
    assert [m["params"]["progress"] for m in messages[:-1]] == [2, 3, 4]  # once, in order
    assert messages[-1]["id"] == 2 and "4 steps on" in messages[-1]["result"]["content"][0]["text"]


async def test_a_dropped_get_stream_resumes_on_the_other_worker(cluster: Cluster) -> None:
    """A notification made while the client's GET stream was down is stored; the client's
    GET with the stream's last event id, on the other worker, gets it once."""
    async with httpx.AsyncClient(timeout=10) as http:
        headers = await open_session(http, cluster.url)
        subscribe = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "resources/subscribe",
            "params": {"uri": "notes://get"},
        }
        assert (await http.post(cluster.url, json=subscribe, headers=headers)).status_code == 200
        async with http.stream("GET", cluster.url, headers=headers) as stream:
            listener = stream.headers["x-worker"]
            buffer = ""
            async for chunk in stream.aiter_text():
                buffer += chunk
                if events(buffer):
                    break  # the priming event: its id is where the stream resumes from
        [(primer, nothing)] = events(buffer)
        assert primer is not None and nothing is None

        touch = {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "touch", "arguments": {"uri": "notes://get"}},
        }
        told = await http.post(cluster.url, json=touch, headers=headers)
        assert '"text":"1"' in told.text  # one session told, on whichever worker
        await stored_notification(cluster.redis, headers["mcp-session-id"])

        resume = dict(headers, **{"last-event-id": primer})
        for _ in range(4):  # round robin: land on the worker that did not hold the stream
            async with http.stream("GET", cluster.url, headers=resume) as again:
                if again.headers["x-worker"] == listener:
                    continue
                buffer = ""
                async for chunk in again.aiter_text():
                    buffer += chunk
                    if any(data is not None for _, data in events(buffer)):
                        break
                break
        # Ended, so that its subscription does not count in other tests' touch calls.
        assert (await http.delete(cluster.url, headers=headers)).status_code == 200
    assert again.headers["x-worker"] != listener
    replayed = [data for _, data in events(buffer) if data is not None]
    assert replayed == [
        {
            "jsonrpc": "2.0",
            "method": "notifications/resources/updated",
            "params": {"uri": "notes://get"},
        }
    ]


async def stored_notification(redis_url: str, session_id: str) -> None:
    client = redis.asyncio.Redis.from_url(redis_url)
    try:
        for _ in range(500):
            entries = await client.xrange(f"mcpkit:http:events:{session_id}")
            if any(b"resources/updated" in e[b"d"] for _, e in entries):
                return
            await asyncio.sleep(0.02)
        raise AssertionError("the notification never reached Redis")
    finally:
        await client.aclose()


async def test_a_stream_resumed_on_another_worker_follows_the_request_still_running(
    cluster: Cluster,
) -> None:
    """The stream drops while its request still runs on the first worker; resumed on the
    second, it gets what was stored, then what is stored after, until the answer."""
    producer, other = cluster.workers
    async with httpx.AsyncClient(timeout=10) as http:
        headers = await open_session(http, producer)
        seen, _ = await drop_after_first_progress(http, producer, headers, 5, 0.3)
        last_id = seen[-1][0]
        assert last_id is not None
        resume = dict(headers, **{"last-event-id": last_id})
        followed = await http.get(other, headers=resume)  # returns once the answer came
        assert followed.status_code == 200
        assert (await http.delete(producer, headers=headers)).status_code == 200

    rest = events(followed.text)
    ids = [eid for eid, _ in rest if eid is not None]
    assert len(ids) == len(set(ids)) and not set(ids) & {eid for eid, _ in seen}
    messages = [data for _, data in rest if data is not None]
    assert [m["params"]["progress"] for m in messages[:-1]] == [2, 3, 4, 5]  # once, in order
    assert messages[-1]["id"] == 2 and "5 steps on" in messages[-1]["result"]["content"][0]["text"]
