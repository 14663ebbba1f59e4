"""Server-Sent Events framing, both directions, without I/O.

`encode_event` renders one event; `SSEParser` takes bytes as they arrive (any chunking) and
yields complete events, following the WHATWG event-stream rules: lines end in LF, CR or CRLF;
`data` lines join with LF; a line starting with ':' is a comment; `id` sets the last event id
(ignored if it contains NUL); `retry` takes digits only; an event is dispatched on a blank
line, and one with no data is dropped unless it carries an id (MCP's priming event).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SSEEvent:
    data: str
    event: str = "message"
    id: str | None = None
    retry: int | None = None


def encode_event(
    data: bytes | str,
    *,
    event: str | None = None,
    event_id: str | None = None,
    retry: int | None = None,
) -> bytes:
    """One event as bytes. Multi-line data becomes several `data:` lines."""
    raw = data.encode() if isinstance(data, str) else data
    parts: list[bytes] = []
    if event_id is not None:
        parts.append(b"id: " + event_id.encode() + b"\n")
    if event is not None:
        parts.append(b"event: " + event.encode() + b"\n")
    if retry is not None:
        parts.append(b"retry: %d\n" % retry)
    if raw or event_id is None:
        for line in raw.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n"):
            parts.append(b"data: " + line + b"\n")
    else:
        parts.append(b"data:\n")  # a priming event: an id and empty data
    parts.append(b"\n")
    return b"".join(parts)


def encode_comment(text: str = "") -> bytes:
    """A comment line, e.g. a keep-alive that proxies see as traffic."""
    return b": " + text.encode() + b"\n\n"


class SSEParser:
    """Incremental event-stream parser; `last_event_id` persists across events."""

    def __init__(self) -> None:
        self._buffer = b""
        self._data: list[str] = []
        self._event = ""
        self._id: str | None = None
        self._retry: int | None = None
        self._has_fields = False
        self.last_event_id: str | None = None

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        self._buffer += chunk
        events: list[SSEEvent] = []
        while True:
            line, found = self._next_line()
            if not found:
                return events
            if not line:
                event = self._dispatch()
                if event is not None:
                    events.append(event)
            else:
                self._field(line)

    def _next_line(self) -> tuple[str, bool]:
        buffer = self._buffer
        lf = buffer.find(b"\n")
        cr = buffer.find(b"\r", 0, lf if lf != -1 else len(buffer))
        if cr == -1 and lf == -1:
            return "", False
        if cr == -1:
            index, end = lf, lf + 1
        elif cr + 1 == len(buffer):
            return "", False  # wait: this CR may be the first half of a CRLF
        else:
            index, end = cr, cr + 2 if buffer[cr + 1] == 0x0A else cr + 1
        self._buffer = buffer[end:]
        return buffer[:index].decode("utf-8", "replace"), True

    def _field(self, line: str) -> None:
        if line.startswith(":"):
            return
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
            self._has_fields = True
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self._id = value
                self.last_event_id = value
                self._has_fields = True
        elif name == "retry" and value.isdigit():
            self._retry = int(value)

    def _dispatch(self) -> SSEEvent | None:
        event = None
        if self._has_fields:
            event = SSEEvent(
                data="\n".join(self._data),
                event=self._event or "message",
                id=self._id,
                retry=self._retry,
            )
        elif self._retry is not None:
            event = SSEEvent(data="", retry=self._retry)
        self._data = []
        self._event = ""
        self._id = None
        self._retry = None
        self._has_fields = False
        return event
