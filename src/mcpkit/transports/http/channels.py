"""The HTTP app's channels on the bus between workers (stores/bus.py), each with its message:

- `ANSWERS`: a client's answer to a request of ours, POSTed to a worker that did not send it
  (the worker whose handler waits for it takes it);
- `TO_HOME`: a message for a session's GET stream, made on a worker where that stream is not
  open (the worker where it is open sends it; the one that made it stored it for a resume);
- `HOME_MOVED`: a session's GET stream opened on the publishing worker (elsewhere, the copies
  stop keeping its messages);
- `CHANGED`: a session's record changed (its `gen`), and how;
- `DELETED`: a session was deleted;
- `FAN_OUT`: a server fan-out event (a list changed, a resource was updated, a task moved),
  told by every other worker to its own clients.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcpkit.protocol.snapshot import SessionChange, decode_change, encode_change
from mcpkit.runtime.fanout import FanOutEvent
from mcpkit.stores.bus import Channel

__all__ = [
    "ANSWERS",
    "CHANGED",
    "DELETED",
    "FAN_OUT",
    "HOME_MOVED",
    "TO_HOME",
    "Change",
    "ForHome",
    "SessionData",
]

JSONObject = dict[str, Any]


@dataclass(frozen=True, slots=True)
class SessionData:
    """Bytes (as text) for one session: an answer (`ANSWERS`)."""

    session_id: str
    data: str


@dataclass(frozen=True, slots=True)
class ForHome:
    """A message for the GET stream of `session_id`, made elsewhere (`TO_HOME`)."""

    session_id: str
    data: str
    method: str | None


@dataclass(frozen=True, slots=True)
class Change:
    """The record of `session_id` is at `gen` after `change` (`CHANGED`)."""

    session_id: str
    gen: int
    change: SessionChange


def _session_data(body: JSONObject) -> SessionData | None:
    session_id, data = body.get("s"), body.get("d")
    if type(session_id) is str and type(data) is str:
        return SessionData(session_id, data)
    return None


def _for_home(body: JSONObject) -> ForHome | None:
    session_id, data, method = body.get("s"), body.get("d"), body.get("m")
    if type(session_id) is str and type(data) is str:
        return ForHome(session_id, data, method if type(method) is str else None)
    return None


def _change(body: JSONObject) -> Change | None:
    session_id, gen, change = body.get("s"), body.get("g"), decode_change(body.get("c"))
    if type(session_id) is not str or type(gen) is not int or change is None:
        return None  # (a change of a newer worker's kind: the record catches the copy up)
    return Change(session_id, gen, change)


def _session_id(body: JSONObject) -> str | None:
    session_id = body.get("s")
    return session_id if type(session_id) is str else None


def _fan_out(body: JSONObject) -> FanOutEvent | None:
    event = body.get("e")
    return tuple(event) if type(event) is list and event else None


ANSWERS: Channel[SessionData] = Channel(
    "http.answer", lambda m: {"s": m.session_id, "d": m.data}, _session_data
)
TO_HOME: Channel[ForHome] = Channel(
    "http.to-home", lambda m: {"s": m.session_id, "d": m.data, "m": m.method}, _for_home
)
HOME_MOVED: Channel[str] = Channel("http.home-moved", lambda s: {"s": s}, _session_id)
CHANGED: Channel[Change] = Channel(
    "http.changed", lambda m: {"s": m.session_id, "g": m.gen, "c": encode_change(m.change)}, _change
)
DELETED: Channel[str] = Channel("http.deleted", lambda s: {"s": s}, _session_id)
FAN_OUT: Channel[FanOutEvent] = Channel("http.fan-out", lambda e: {"e": list(e)}, _fan_out)
