"""Following a lost POST stream resumed on a worker other than the one whose request still
writes it: what that worker stored in the session's event log (stores/events.py) after the
client's `Last-Event-ID`, then, read as it is stored (`EventLog.tail`), what it stores next,
each event sent with the id it was stored under, until the request's answer. When the store
fails meanwhile the stream ends (the client resumes again), with one log line."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from dataclasses import dataclass

import orjson

from mcpkit.protocol import Outgoing
from mcpkit.protocol.http import event_stream
from mcpkit.stores.events import EventLog, Events, EventTail
from mcpkit.stores.tasks import StoreUnavailable
from mcpkit.transports.http.state import Followed
from mcpkit.transports.http.streams import ResponseStream

logger = logging.getLogger("mcpkit.http")


@dataclass(frozen=True, slots=True)
class Following:
    """How a followed stream is read: each blocking read waits at most `block_ms` (it must
    answer before the store's timeout), and a stream with nothing new for `idle` s ends (the
    client may resume again)."""

    idle: float = 10.0
    block_ms: int = 1000


async def follow_stream(
    events: EventLog, session_id: str, last_event_id: str, following: Following
) -> Followed | None:
    """The stream of `last_event_id` in `session_id`'s events, followed from there (see the
    module docstring). None when the event is unknown. Raises StoreUnavailable when the
    store fails before the stream starts."""
    stream_id = event_stream(last_event_id)
    tail = None if stream_id is None else await events.tail(session_id, last_event_id)
    if stream_id is None or tail is None:
        return None
    target = _Target(stream_id)
    target.push(tail.stored)
    if target.stream.finished:
        return Followed(target.stream, target.stored_as, lambda: None)
    task = asyncio.get_running_loop().create_task(_tail(tail, target, following))

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

    def push(self, events: Events) -> None:
        """Push the events of the stream among `events` (the answer ends the stream)."""
        prefix = self.stream_id + "."
        for eid, data in events:
            if not eid.startswith(prefix) or not data:
                continue
            self.ids.append(eid)
            self.stream.push(Outgoing(data, final=_is_answer(data)))
            if self.stream.finished:
                break


async def _tail(tail: EventTail, target: _Target, following: Following) -> None:
    idle = 0.0
    wait = following.block_ms / 1000
    try:
        while not target.stream.finished and idle < following.idle:
            found = await tail.next(wait)
            idle = 0.0 if found else idle + wait
            target.push(found)
    except StoreUnavailable as failure:  # the client resumes again, maybe once it is back
        logger.warning("a followed stream ended: %s", failure)
    target.stream.end()


def _is_answer(data: bytes) -> bool:
    """A stored event is its request's answer: a response (no method) to the client."""
    with contextlib.suppress(ValueError):
        message = orjson.loads(data)
        return type(message) is dict and "method" not in message
    return False
