"""Following a lost POST stream resumed on a worker other than the one whose request still
writes it: what that worker stored in the session's Redis event stream after the client's
`Last-Event-ID`, then, read as it is stored (XREAD), what it stores next, each event sent with
the id it was stored under, until the request's answer."""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from dataclasses import dataclass
from typing import Any

import orjson

from mcpkit.protocol import Outgoing
from mcpkit.protocol.http import event_stream
from mcpkit.stores.redis_events import RedisEventStore
from mcpkit.transports.http.state import Followed
from mcpkit.transports.http.streams import ResponseStream


@dataclass(frozen=True, slots=True)
class Following:
    """How a followed stream is read: each blocking read waits at most `block_ms` (it must
    answer before the Redis client's timeout), and a stream with nothing new for `idle` s
    ends (the client may resume again)."""

    idle: float = 10.0
    block_ms: int = 1000


async def follow_stream(
    events: RedisEventStore,
    client: Any,
    session_id: str,
    last_event_id: str,
    following: Following,
) -> Followed | None:
    """The stream of `last_event_id` in `session_id`'s events, followed from there (see the
    module docstring). None when the event is unknown."""
    stream_id = event_stream(last_event_id)
    await events.flush()
    entries = await events.entries(session_id)
    wanted = last_event_id.encode()
    position = next((i for i, (_, f) in enumerate(entries) if f[b"i"] == wanted), None)
    if stream_id is None or position is None:
        return None
    target = _Target(stream_id)
    last = target.push(entries[position + 1 :])
    if target.stream.finished:
        return Followed(target.stream, target.stored_as, lambda: None)
    after = last or entries[position][0]
    tail = _tail(client, events.key(session_id), after, target, following)
    task = asyncio.get_running_loop().create_task(tail)

    def stop() -> None:
        task.cancel()

    return Followed(target.stream, target.stored_as, stop)


class _Target:
    """The resumed stream, fed the events of `stream_id`, and the ids they were stored under
    (each sent with its own)."""

    def __init__(self, stream_id: str) -> None:
        self.stream_id = stream_id
        self.stream = ResponseStream(stream_id)
        self.ids: deque[str] = deque()

    def stored_as(self, _stream_id: str, _data: bytes) -> str | None:
        return self.ids.popleft() if self.ids else None

    def push(self, entries: list[tuple[Any, dict[bytes, bytes]]]) -> Any:
        """Push the events of the stream among `entries` (the answer ends the stream); the
        last entry's id."""
        prefix = self.stream_id + "."
        last = None
        for entry_id, fields in entries:
            last = entry_id
            eid, data = fields[b"i"].decode(), fields[b"d"]
            if not eid.startswith(prefix) or not data:
                continue
            self.ids.append(eid)
            self.stream.push(Outgoing(data, final=_is_answer(data)))
            if self.stream.finished:
                break
        return last


async def _tail(client: Any, key: str, after: Any, target: _Target, following: Following) -> None:
    idle = 0.0
    with contextlib.suppress(Exception):  # Redis away: the stream ends, the client resumes
        while not target.stream.finished and idle < following.idle:
            found = await client.xread({key: after}, block=following.block_ms)
            if not found:
                idle += following.block_ms / 1000
                continue
            idle = 0.0
            entries = found[0][1]
            after = target.push(entries) or entries[-1][0]
    target.stream.end()


def _is_answer(data: bytes) -> bool:
    """A stored event is its request's answer: a response (no method) to the client."""
    with contextlib.suppress(ValueError):
        message = orjson.loads(data)
        return type(message) is dict and "method" not in message
    return False
