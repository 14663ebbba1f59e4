"""Where a connection is in its life, and every way it moves: one table, read in one place.

How it works. A connection is in one `State`. What moves it is a `Step`: something it sends
(`initialize`), something it receives (an initialize answer, `notifications/initialized`), a
choice its owner makes (`use_per_request`, `use_handshake`) or the end of the transport.
`TRANSITIONS[role][state][step]` is the state that follows; a step missing from the table is
not allowed there (`next_state` says None and the connection refuses or ignores it, whichever
the step calls for). `Connection._move` is the one place that applies the table.

    client  NEW --send initialize--> INITIALIZING --initialize result--> READY
                                     INITIALIZING --initialize error--> NEW (nothing agreed)
                                     INITIALIZING --bad result, timeout--> CLOSED
            NEW, INITIALIZING, READY --use per-request revision--> READY
            READY --back to the handshake (the probe went unanswered)--> NEW
    server  NEW --initialize received--> INITIALIZING --notifications/initialized--> READY
            NEW --restore (a session agreed earlier, elsewhere)--> READY
    both    any --transport lost--> CLOSED

What each state permits is a table too (`SERVES_REQUESTS`, `SENDS`): the connection reads it
once per move, not per message.
"""

from __future__ import annotations

from enum import Enum
from typing import Final

from mcpkit.protocol.lifecycle import Role

__all__ = ["SENDS", "SERVES_REQUESTS", "TRANSITIONS", "State", "Step", "next_state"]


class State(Enum):
    NEW = "new"  # nothing exchanged yet
    INITIALIZING = "initializing"  # client: initialize sent; server: answered, awaiting initialized
    READY = "ready"
    CLOSED = "closed"


class Step(Enum):
    """What moves a connection from one state to the next."""

    SEND_INITIALIZE = "send initialize"  # client
    INITIALIZE_AGREED = "initialize result accepted"  # client
    INITIALIZE_REFUSED = "initialize answered with an error"  # client: nothing was agreed
    INITIALIZE_FAILED = "initialize result unusable, or no answer in time"  # client
    USE_PER_REQUEST = "speak a per-request revision"  # client, no handshake
    USE_HANDSHAKE = "back to the handshake era"  # client, the per-request probe failed
    RECEIVE_INITIALIZE = "initialize received and answered"  # server
    RECEIVE_INITIALIZED = "notifications/initialized received"  # server
    RESTORE = "a session agreed earlier restored"  # server, another worker's handshake
    RESUME = "a session another client process opened resumed"  # client, no handshake sent
    LOST = "transport lost"  # both


NEW, INITIALIZING, READY, CLOSED = State.NEW, State.INITIALIZING, State.READY, State.CLOSED

TRANSITIONS: Final[dict[Role, dict[State, dict[Step, State]]]] = {
    "client": {
        NEW: {
            Step.SEND_INITIALIZE: INITIALIZING,
            Step.USE_PER_REQUEST: READY,
            Step.RESUME: READY,
            Step.LOST: CLOSED,
        },
        INITIALIZING: {
            Step.INITIALIZE_AGREED: READY,
            Step.INITIALIZE_REFUSED: NEW,
            Step.INITIALIZE_FAILED: CLOSED,
            # An initialize sent while a per-request probe was pending is abandoned.
            Step.USE_PER_REQUEST: READY,
            Step.LOST: CLOSED,
        },
        READY: {
            Step.USE_PER_REQUEST: READY,
            Step.USE_HANDSHAKE: NEW,
            Step.LOST: CLOSED,
        },
        CLOSED: {Step.LOST: CLOSED},
    },
    "server": {
        NEW: {Step.RECEIVE_INITIALIZE: INITIALIZING, Step.RESTORE: READY, Step.LOST: CLOSED},
        INITIALIZING: {Step.RECEIVE_INITIALIZED: READY, Step.LOST: CLOSED},
        READY: {Step.LOST: CLOSED},
        CLOSED: {Step.LOST: CLOSED},
    },
}

# Where the peer's requests of a handshake-era session are served (ping is answered always;
# a 2026-07-28 request is served on its own terms in any state but CLOSED).
SERVES_REQUESTS: Final[dict[Role, frozenset[State]]] = {
    "client": frozenset({READY}),
    "server": frozenset({INITIALIZING, READY}),
}

# Where we may send requests and notifications (ping, and a server's log messages while the
# client has not yet said initialized, are the connection's own exceptions).
SENDS: Final = frozenset({READY})


def next_state(role: Role, state: State, step: Step) -> State | None:
    """The state `step` leads to from `state`, or None when `step` is not allowed there."""
    return TRANSITIONS[role][state].get(step)
