"""The inspector's history: every JSON-RPC message its client sent or received, with timing,
fanned out to the page's event streams and, with `record`, written to a JSON lines file.

How this works: the observed transport (observe.py) calls `message(direction, wire)` for each
message; an answer gets `ms`, the time since the request it answers was sent. Every event
(messages, notifications, asks, state) goes to each subscriber's queue; a subscriber that
falls `MAX_BACKLOG` events behind is dropped (its stream ends; the page reconnects and reads
/api/history), so a stalled browser tab cannot grow the inspector's memory without bound.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any, BinaryIO

import orjson

JSONObject = dict[str, Any]
MAX_BACKLOG = 10_000  # events queued for one event stream before it is dropped
MAX_HISTORY = 50_000  # messages kept in memory (the recording file keeps them all)


class History:
    """The messages so far and the live event streams."""

    def __init__(self, record: Path | None = None) -> None:
        self.messages: list[JSONObject] = []
        self._subscribers: set[asyncio.Queue[JSONObject | None]] = set()
        self._started = time.monotonic()
        self._sent: dict[Any, float] = {}  # request id -> when it was sent
        self._record_path = record
        self._record: BinaryIO | None = None
        self.meta: JSONObject | None = None

    # -- connections ---------------------------------------------------------------------

    def start(self, meta: JSONObject) -> None:
        """A new connection: the clock and the recording start again (`meta` is its first
        line: target, mode; the server part is filled in by `connected`)."""
        self.messages.clear()
        self._sent.clear()
        self._started = time.monotonic()
        self.meta = {"t": 0, "dir": "meta", **meta}
        if self._record_path is not None:
            self.close()
            self._record = self._record_path.open("wb")

    def connected(self, server: JSONObject) -> None:
        """The server is known: the recording's first line is written."""
        if self.meta is None:
            return
        self.meta["server"] = server
        if self._record is not None:
            self._write(self.meta)
            for entry in self.messages:  # what the handshake exchanged, in order
                self._write(_recorded(entry))

    def close(self) -> None:
        if self._record is not None:
            self._record.close()
            self._record = None

    def jsonl(self) -> bytes:
        """The recording format for the messages kept in memory (GET /api/history.jsonl)."""
        lines = [] if self.meta is None else [orjson.dumps(self.meta)]
        lines.extend(orjson.dumps(_recorded(entry)) for entry in self.messages)
        return b"".join(line + b"\n" for line in lines)

    # -- events --------------------------------------------------------------------------

    def now(self) -> float:
        return round(time.monotonic() - self._started, 6)

    def message(self, direction: str, wire: Any) -> None:
        """One JSON-RPC message (a dict, or a list for a batch) sent or received."""
        now = time.monotonic()
        ms = None
        if isinstance(wire, dict) and "id" in wire:
            if "method" in wire and direction == "send":
                self._sent[_key(wire["id"])] = now
            elif "method" not in wire:
                sent = self._sent.pop(_key(wire["id"]), None)
                ms = None if sent is None else round((now - sent) * 1000, 3)
        event = {"type": "message", "dir": direction, "message": wire, "t": self.now(), "ms": ms}
        self.messages.append(event)
        if len(self.messages) > MAX_HISTORY:
            del self.messages[: len(self.messages) - MAX_HISTORY]
        if self._record is not None and self.meta is not None and "server" in self.meta:
            self._write(_recorded(event))
        self.publish(event)
        if direction == "recv" and isinstance(wire, dict) and "id" not in wire:
            method = wire.get("method")
            if isinstance(method, str):
                self.publish(
                    {
                        "type": "notification",
                        "method": method,
                        "params": wire.get("params") or {},
                        "t": event["t"],
                    }
                )

    def publish(self, event: JSONObject) -> None:
        for queue in list(self._subscribers):
            if queue.qsize() >= MAX_BACKLOG:
                self._subscribers.discard(queue)
                queue.put_nowait(None)  # ends that stream
            else:
                queue.put_nowait(event)

    def subscribe(self) -> asyncio.Queue[JSONObject | None]:
        queue: asyncio.Queue[JSONObject | None] = asyncio.Queue()
        self._subscribers.add(queue)
        return queue

    def unsubscribe(self, queue: asyncio.Queue[JSONObject | None]) -> None:
        self._subscribers.discard(queue)

    def end_streams(self) -> None:
        """Shutting down: every event stream ends."""
        for queue in list(self._subscribers):
            queue.put_nowait(None)
        self._subscribers.clear()

    def _write(self, line: JSONObject) -> None:
        assert self._record is not None
        self._record.write(orjson.dumps(line) + b"\n")
        self._record.flush()  # a crash or Ctrl-C keeps what was seen


def _recorded(event: JSONObject) -> JSONObject:
    return {"t": event["t"], "dir": event["dir"], "message": event["message"]}


def _key(request_id: Any) -> Any:
    # 1 and "1" are different requests in JSON-RPC; keep them apart
    return (type(request_id).__name__, request_id)
