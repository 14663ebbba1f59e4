"""Property-based tests of the sans-IO core: bad input, answers owed, and request lifetimes.

1. Arbitrary bytes, in every connection state, never raise, and all that comes back is JSON-RPC
   responses (never a request).
2. Arbitrary JSON values: each well-formed request gets exactly one answer carrying its id,
   a request whose id cannot be read gets at most one answer with id null, a notification none.
3. Random operations on a client+server pair (requests with timeouts and progress, answers,
   errors, cancellations, time, delivery in random-sized chunks): every request ends exactly
   once, nothing is answered after a cancellation the server has seen, counters and deadlines
   come back to rest.
4. Batches at 2025-03-26: one array back, one answer per answerable request.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import event as tally
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from mcpkit.protocol import (
    Connection,
    ErrorReceived,
    Event,
    Initialized,
    MessageRejected,
    ProgressReceived,
    RequestCancelled,
    RequestReceived,
    RequestTimedOut,
    ResponseReceived,
    Timeout,
)

from .conftest import Pair, make_pair

REVISIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
BATCH_REVISION = "2025-03-26"

FAST = settings(deadline=None, max_examples=25, suppress_health_check=[HealthCheck.too_slow])

# -- strategies ------------------------------------------------------------------------------

MCP_METHODS = (
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "sampling/createMessage",
    "roots/list",
    "elicitation/create",
    "tasks/get",
    "tasks/list",
    "tasks/result",
    "tasks/cancel",
    "notifications/initialized",
    "notifications/cancelled",
    "notifications/progress",
    "notifications/message",
    "notifications/roots/list_changed",
    "notifications/tools/list_changed",
    "notifications/resources/list_changed",
    "notifications/resources/updated",
    "notifications/prompts/list_changed",
    "notifications/elicitation/complete",
    "notifications/tasks/status",
)
JUNK_METHODS = ("", "PING", "ping ", "tools/", "notifications/", "rpc.discover", "x/y", "\x00")

# orjson writes only 64-bit integers and well-formed UTF-8; stay inside what JSON can carry.
INTS = st.integers(min_value=-(2**63), max_value=2**64 - 1)
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
FLOATS = st.floats(allow_nan=False, allow_infinity=False)
SCALARS = st.none() | st.booleans() | INTS | FLOATS | TEXT
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=10,
)
JSON_OBJECTS = st.dictionaries(TEXT, JSON, max_size=4)

ID_POOL = (0, 1, 2, -1, "a", "1", "")  # small, so ids collide
VALID_IDS = st.sampled_from(ID_POOL) | INTS | TEXT
ANY_IDS = VALID_IDS | st.none() | st.booleans() | FLOATS | JSON
METHOD_NAMES = st.sampled_from(MCP_METHODS + JUNK_METHODS) | TEXT
ANY_METHODS = METHOD_NAMES | JSON
PROGRESS_TOKENS = VALID_IDS | JSON
PARAMS = st.fixed_dictionaries(
    {},
    optional={
        "_meta": st.fixed_dictionaries({}, optional={"progressToken": PROGRESS_TOKENS}) | JSON,
        "requestId": ANY_IDS,
        "progressToken": PROGRESS_TOKENS,
        "progress": INTS | FLOATS | JSON,
        "name": TEXT,
        "protocolVersion": st.sampled_from(REVISIONS) | TEXT,
        "capabilities": JSON_OBJECTS,
        "clientInfo": JSON_OBJECTS,
    },
)
ANY_PARAMS = PARAMS | JSON
ERROR_OBJECTS = (
    st.fixed_dictionaries({"code": INTS, "message": TEXT}, optional={"data": JSON}) | JSON
)

HANDLED_METHODS = st.sampled_from(
    ("tools/list", "tools/call", "roots/list", "sampling/createMessage")
)
WELL_FORMED_REQUESTS = st.builds(
    lambda msg_id, method, params: {"jsonrpc": "2.0", "id": msg_id, "method": method, **params},
    VALID_IDS,
    HANDLED_METHODS | METHOD_NAMES,
    st.just({}) | st.builds(lambda p: {"params": p}, PARAMS),
)
WELL_FORMED_NOTIFICATIONS = st.builds(
    lambda method, params: {"jsonrpc": "2.0", "method": method, **params},
    METHOD_NAMES,
    st.just({}) | st.builds(lambda p: {"params": p}, PARAMS),
)
FUZZED_MESSAGES = st.fixed_dictionaries(
    {},
    optional={
        "jsonrpc": st.just("2.0") | JSON,
        "id": ANY_IDS,
        "method": ANY_METHODS,
        "params": ANY_PARAMS,
        "result": JSON_OBJECTS | JSON,
        "error": ERROR_OBJECTS,
    },
)
INITIALIZE_REQUESTS = st.builds(
    lambda msg_id, version: {
        "jsonrpc": "2.0",
        "id": msg_id,
        "method": "initialize",
        "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "h"}},
    },
    VALID_IDS,
    st.sampled_from(REVISIONS) | TEXT,
)
JSON_VALUES = (
    WELL_FORMED_REQUESTS | INITIALIZE_REQUESTS | WELL_FORMED_NOTIFICATIONS | FUZZED_MESSAGES | JSON
)

JSON_TOKENS = (
    b"{", b"}", b"[", b"]", b",", b":", b" ", b"\n", b'"jsonrpc"', b'"2.0"', b'"id"',
    b'"method"', b'"params"', b'"result"', b'"error"', b'"code"', b'"message"', b'"ping"',
    b'"initialize"', b'"tools/list"', b'"notifications/cancelled"', b'"requestId"',
    b'"_meta"', b'"progressToken"', b"1", b"-7", b"0", b"1.5", b"null", b"true", b"false",
    b'"x"', b"\xff", b"1e999", b'"\\ud800"', b"18446744073709551616", b"\x00",
)  # fmt: skip


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    data = bytearray(orjson.dumps(draw(JSON_VALUES)))
    for _ in range(draw(st.integers(0, 3))):
        if not data:
            break
        at = draw(st.integers(0, len(data) - 1))
        action = draw(st.sampled_from(("flip", "cut", "drop")))
        if action == "flip":
            data[at] = draw(st.integers(0, 255))
        elif action == "cut":
            del data[at:]
        else:
            del data[at]
    return bytes(data)


ARBITRARY_INPUT = (
    st.binary(max_size=200)
    | st.lists(st.sampled_from(JSON_TOKENS), max_size=30).map(b"".join)
    | JSON_VALUES.map(orjson.dumps)
    | mutated()
    | st.text(max_size=60)  # receive() takes str too; lone surrogates included
)

# -- checks ----------------------------------------------------------------------------------


def valid_id(value: object) -> bool:
    return type(value) is str or type(value) is int


def check_answer(obj: Any) -> None:
    """One JSON-RPC 2.0 response or error response, exactly as the spec shapes it."""
    assert type(obj) is dict, obj
    assert obj.get("jsonrpc") == "2.0", obj
    assert "method" not in obj, f"sent a request or notification: {obj}"
    assert "id" in obj and (obj["id"] is None or valid_id(obj["id"])), obj
    if "result" in obj:
        assert set(obj) == {"jsonrpc", "id", "result"} and type(obj["result"]) is dict, obj
    else:
        assert set(obj) == {"jsonrpc", "id", "error"}, obj
        error = obj["error"]
        assert type(error) is dict and set(error) <= {"code", "message", "data"}, obj
        assert type(error["code"]) is int and type(error["message"]) is str, obj


def take_answers(connection: Connection) -> list[Any]:
    """Drain the outbox; every item must be an answer or a non-empty array of answers."""
    out: list[Any] = []
    for sent in connection.data_to_send():
        data, related = sent.data, sent.related
        assert sent.final, "only answers are expected here"
        assert type(data) is bytes and b"\n" not in data  # one stdio line each
        value = orjson.loads(data)
        if type(value) is list:
            assert value, "an empty array was sent"
            # related to the batch's first request (HTTP routes by it), or to nothing
            assert related is None or valid_id(related)
            for item in value:
                check_answer(item)
        else:
            check_answer(value)
            assert related == value["id"], "the routing id must be the answered id"
        out.append(value)
    return out


def flat(answers: list[Any]) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for answer in answers:
        items.extend(answer if type(answer) is list else [answer])
    return items


def is_request(obj: Any) -> bool:
    """A well-formed request with an id we can echo."""
    return (
        type(obj) is dict
        and obj.get("jsonrpc") == "2.0"
        and type(obj.get("method")) is str
        and "id" in obj
        and valid_id(obj["id"])
        and (obj.get("params") is None or type(obj["params"]) is dict)
    )


def is_unreadable_id_request(obj: Any) -> bool:
    return (
        type(obj) is dict
        and obj.get("jsonrpc") == "2.0"
        and type(obj.get("method")) is str
        and "id" in obj
        and not valid_id(obj["id"])
    )


def is_notification(obj: Any) -> bool:
    return (
        type(obj) is dict
        and obj.get("jsonrpc") == "2.0"
        and type(obj.get("method")) is str
        and "id" not in obj
    )


def is_response_shaped(obj: Any) -> bool:
    return type(obj) is dict and obj.get("method") is None and ("result" in obj or "error" in obj)


# -- connections in each state ---------------------------------------------------------------

CLIENT_CAPABILITIES = {"roots": {"listChanged": True}, "sampling": {}, "elicitation": {}}
STATES = (
    [("server", "new", None), ("client", "new", None)]
    + [("server", "initializing", v) for v in REVISIONS]
    + [("server", "ready", v) for v in REVISIONS]
    + [("client", "initializing", v) for v in REVISIONS]
    + [("client", "ready", v) for v in REVISIONS]
)


def connection_in(role: str, state: str, version: str | None) -> Connection:
    pair = make_pair(client_capabilities=CLIENT_CAPABILITIES)
    if state == "ready":
        pair.handshake(version)
    elif state == "initializing":
        pair.client.start_initialize(now=0, version=version)
        if role == "server":
            pair.to_server()  # answered; notifications/initialized not delivered
    connection = pair.server if role == "server" else pair.client
    connection.data_to_send()
    return connection


# -- 1. arbitrary bytes ----------------------------------------------------------------------


@pytest.mark.parametrize(("role", "state", "version"), STATES)
@FAST
@given(inputs=st.lists(ARBITRARY_INPUT, min_size=1, max_size=6))
def test_arbitrary_bytes_never_raise_and_only_answers_come_back(
    role: str, state: str, version: str | None, inputs: list[bytes | str]
) -> None:
    connection = connection_in(role, state, version)
    for data in inputs:
        events = connection.receive(data, 0.0)
        if any(isinstance(e, Initialized) for e in events) and role == "client":
            # The one message a client volunteers: the end of its own handshake.
            out = connection.data_to_send()
            assert [orjson.loads(d) for d, _ in out] == [
                {"jsonrpc": "2.0", "method": "notifications/initialized"}
            ]
            continue
        take_answers(connection)


# -- 2. arbitrary JSON values ----------------------------------------------------------------


@dataclass
class Surfaced:
    in_batch: bool


@pytest.mark.parametrize(
    ("role", "state", "version"),
    [("server", "new", None)]
    + [("server", "ready", v) for v in REVISIONS]
    + [("client", "ready", "2025-11-25")],
)
@settings(deadline=None, max_examples=50)
@given(
    values=st.lists(JSON_VALUES, min_size=1, max_size=8),
    answer_now=st.lists(st.booleans(), min_size=8, max_size=8),
    use_error=st.booleans(),
)
def test_every_request_gets_exactly_one_answer(
    role: str,
    state: str,
    version: str | None,
    values: list[Any],
    answer_now: list[bool],
    use_error: bool,
) -> None:
    connection = connection_in(role, state, version)
    surfaced: dict[Any, Surfaced] = {}

    def answer(request_id: Any) -> None:
        entry = surfaced.pop(request_id)
        if use_error:
            assert connection.send_error(request_id, -32000, "no")
        else:
            assert connection.send_result(request_id, {"ok": True})
        answers = take_answers(connection)
        if entry.in_batch:
            return  # batches: see test_batch_gets_one_array_with_one_answer_per_request
        [reply] = answers
        assert reply["id"] == request_id and type(reply["id"]) is type(request_id)
        assert ("error" in reply) is use_error

    for value, now in zip(values, answer_now, strict=False):
        events = connection.receive(orjson.dumps(value), 0.0)
        answers = take_answers(connection)
        received = [e for e in events if isinstance(e, RequestReceived)]
        for event in events:  # in order: a batch may surface a request and then cancel it
            if isinstance(event, RequestReceived):
                surfaced[event.id] = Surfaced(in_batch=type(value) is list)
            elif isinstance(event, RequestCancelled):
                assert surfaced.pop(event.id, None) is not None
        if type(value) is list:
            if connection.protocol_version != BATCH_REVISION:
                [reply] = answers
                assert reply["id"] is None and reply["error"]["code"] == -32600
        elif is_request(value):
            assert all(type(a) is dict for a in answers)
            tally("request surfaced" if received else "request answered at once")
            if received:
                [event] = received
                assert answers == [] and event.id == value["id"]
                assert type(event.id) is type(value["id"])
            else:
                [reply] = answers
                assert reply["id"] == value["id"] and type(reply["id"]) is type(value["id"])
        else:
            assert received == []
            if is_notification(value) or is_response_shaped(value):
                assert answers == [], f"answered a notification or a response: {value}"
            elif is_unreadable_id_request(value) or type(value) is not dict:
                assert len(answers) <= 1 and all(a["id"] is None for a in answers)
            else:
                assert len(answers) <= 1
                own_id = value.get("id") if valid_id(value.get("id")) else None
                assert all(a["id"] in (None, own_id) for a in answers)
        if now and surfaced:
            answer(next(iter(surfaced)))
    for request_id in list(surfaced):
        answer(request_id)
    assert connection.requests_in_flight == 0


# -- 3. sequences of operations on a joined pair ---------------------------------------------


@dataclass
class Sent:
    """The test's record of one client request."""

    method: str
    timeout: Timeout | None
    at: float | None  # when it should time out, as the model sees it
    hard_at: float | None
    outcome: str | None = None  # response | error | timeout | cancel
    last_progress: float | None = None


@dataclass
class Working:
    """A request the server surfaced and has neither answered nor seen cancelled."""

    progress_token: Any
    last_progress: float = 0.0


def first_of(a: float | None, b: float | None) -> float | None:
    if a is None:
        return b
    if b is None:
        return a
    return min(a, b)


SECONDS = st.sampled_from([1.0, 2.0, 3.0, 5.0]) | st.floats(0.01, 10)
LIMITS = st.builds(
    Timeout,
    timeout=st.none() | SECONDS,
    reset_on_progress=st.booleans(),
    maximum=st.none() | SECONDS,
)
TIMEOUTS = st.none() | LIMITS
PICK = st.integers(min_value=0, max_value=10**6)


class PairMachine(RuleBasedStateMachine):
    """A client and a server after the handshake, with the wire between them as two queues."""

    pair: Pair

    @initialize(version=st.sampled_from(REVISIONS))
    def handshake(self, version: str) -> None:
        self.pair = make_pair()
        self.pair.handshake(version)
        self.now = 0.0
        self.to_server: list[bytes] = []  # in transit, in order
        self.to_client: list[bytes] = []
        self.sent: dict[Any, Sent] = {}
        self.working: dict[Any, Working] = {}
        self.answered: set[Any] = set()  # the server answered these
        self.cancelled: set[Any] = set()  # the server saw these cancelled before answering
        self.responses_on_wire: Counter[Any] = Counter()

    # -- client side

    @rule(
        method=st.sampled_from(["tools/list", "tools/call", "ping", "x/unknown"]),
        timeout=TIMEOUTS,
        progress=st.booleans(),
    )
    def client_sends(self, method: str, timeout: Timeout | None, progress: bool) -> None:
        client = self.pair.client
        params = {"name": "t"} if method == "tools/call" else None
        request_id = client.send_request(
            method, params, now=self.now, timeout=timeout, progress=progress
        )
        assert request_id not in self.sent
        soft = hard = None
        if timeout is not None:
            soft = None if timeout.timeout is None else self.now + timeout.timeout
            hard = None if timeout.maximum is None else self.now + timeout.maximum
        self.sent[request_id] = Sent(method, timeout, first_of(soft, hard), hard)
        self._pull_client()

    @precondition(lambda self: self.sent)
    @rule(pick=PICK, reason=st.none() | TEXT)
    def client_cancels(self, pick: int, reason: str | None) -> None:
        request_id = sorted(self.sent)[pick % len(self.sent)]
        record = self.sent[request_id]
        assert self.pair.client.cancel(request_id, reason) is (record.outcome is None)
        if record.outcome is None:
            record.outcome = "cancel"
        self._pull_client()

    @rule(step=st.sampled_from([0.0, 0.1, 0.5, 1.0]) | st.floats(0, 4))
    def time_passes(self, step: float) -> None:
        self.now += step
        due = {
            request_id
            for request_id, record in self.sent.items()
            if record.outcome is None and record.at is not None and record.at <= self.now
        }
        events = self.pair.client.expire(self.now)
        timed_out = [e.id for e in events if isinstance(e, RequestTimedOut)]
        assert len(timed_out) == len(events), events
        assert sorted(timed_out) == sorted(due), "each due request times out exactly once"
        for request_id in timed_out:
            self.sent[request_id].outcome = "timeout"
            tally("a request timed out")
        self._pull_client()
        assert self.pair.server.expire(self.now) == []

    @precondition(lambda self: self.to_client)
    @rule(count=st.integers(1, 6))
    def deliver_to_client(self, count: int) -> None:
        chunk, self.to_client = self.to_client[:count], self.to_client[count:]
        for data in chunk:
            message = orjson.loads(data)
            record = self.sent.get(message.get("id"))
            if record is not None and record.outcome in ("cancel", "timeout"):
                tally(f"an answer crossed a {record.outcome} on the wire")
            for event in self.pair.client.receive(data, self.now):
                self._client_event(event)
            assert self.pair.client.data_to_send() == []

    def _client_event(self, event: Event) -> None:
        if isinstance(event, ResponseReceived | ErrorReceived):
            record = self.sent[event.id]
            assert record.outcome is None, f"{event} after {record.outcome}"
            assert event.method == record.method
            record.outcome = "response" if isinstance(event, ResponseReceived) else "error"
        elif isinstance(event, ProgressReceived):
            tally("progress reached the client")
            record = self.sent[event.request_id]
            assert record.outcome is None, f"progress after {record.outcome}"
            assert record.last_progress is None or event.progress > record.last_progress
            record.last_progress = event.progress
            limit = record.timeout
            if limit is not None and limit.reset_on_progress and limit.timeout is not None:
                record.at = first_of(self.now + limit.timeout, record.hard_at)
        else:
            raise AssertionError(f"unexpected event at the client: {event}")

    def _pull_client(self) -> None:
        for out in self.pair.client.data_to_send():
            self.to_server.append(out.data)

    # -- server side

    @precondition(lambda self: self.to_server)
    @rule(count=st.integers(1, 6))
    def deliver_to_server(self, count: int) -> None:
        chunk, self.to_server = self.to_server[:count], self.to_server[count:]
        for data in chunk:
            message = orjson.loads(data)
            for event in self.pair.server.receive(data, self.now):
                self._server_event(event, message)
            self._pull_server()

    def _server_event(self, event: Event, message: dict[str, Any]) -> None:
        if isinstance(event, RequestReceived):
            assert event.id not in self.working and event.id not in self.answered
            assert event.method == self.sent[event.id].method
            self.working[event.id] = Working(event.progress_token)
        elif isinstance(event, RequestCancelled):
            # Only a request still being worked on can be cancelled; a cancellation that
            # crossed the answer on the wire is ignored.
            assert self.working.pop(event.id, None) is not None
            self.cancelled.add(event.id)
            tally("the server saw a cancellation before answering")
        elif isinstance(event, MessageRejected):
            assert message.get("method") == "x/unknown" and event.code == -32601
        else:
            raise AssertionError(f"unexpected event at the server: {event}")

    @precondition(lambda self: self.working)
    @rule(pick=PICK, as_error=st.booleans())
    def server_answers(self, pick: int, as_error: bool) -> None:
        request_id = sorted(self.working)[pick % len(self.working)]
        del self.working[request_id]
        server = self.pair.server
        if as_error:
            assert server.send_error(request_id, -32000, "failed", {"why": "test"})
        else:
            assert server.send_result(request_id, {"content": []})
        self.answered.add(request_id)
        self._pull_server()

    @precondition(lambda self: self.cancelled or self.answered)
    @rule(pick=PICK)
    def server_answers_too_late(self, pick: int) -> None:
        # A handler that finishes after its request was cancelled or already answered.
        done = sorted(self.cancelled | self.answered)
        request_id = done[pick % len(done)]
        assert not self.pair.server.send_result(request_id, {"late": True})
        assert not self.pair.server.send_progress(request_id, 1e9)
        assert self.pair.server.data_to_send() == []

    @precondition(lambda self: self.working)
    @rule(pick=PICK, step=st.sampled_from([0.5, 1.0]) | st.floats(0.001, 10))
    def server_reports_progress(self, pick: int, step: float) -> None:
        request_id = sorted(self.working)[pick % len(self.working)]
        work = self.working[request_id]
        work.last_progress += step
        sent = self.pair.server.send_progress(request_id, work.last_progress, total=100.0)
        assert sent is (work.progress_token is not None)
        self._pull_server()

    def _pull_server(self) -> None:
        for out in self.pair.server.data_to_send():
            message = orjson.loads(out.data)
            if "method" in message:
                assert message["method"] == "notifications/progress" == out.method
                assert out.related in self.working and not out.final
            else:
                assert out.final and out.related == message["id"]
                assert out.code == (message["error"]["code"] if "error" in message else None)
                check_answer(message)
                request_id = message["id"]
                assert request_id not in self.cancelled, "answered after seeing the cancellation"
                self.responses_on_wire[request_id] += 1
                assert self.responses_on_wire[request_id] == 1, "answered twice"
            self.to_client.append(out.data)

    # -- invariants

    @invariant()
    def counters_match_the_model(self) -> None:
        pending = [r for r in self.sent.values() if r.outcome is None]
        assert self.pair.client.requests_pending == len(pending)
        assert self.pair.server.requests_in_flight == len(self.working)
        deadlines = [r.at for r in pending if r.at is not None]
        assert self.pair.client.next_deadline() == (min(deadlines) if deadlines else None)
        assert self.pair.server.next_deadline() is None

    def teardown(self) -> None:
        if not hasattr(self, "sent"):
            return
        # Let everything arrive and answer whatever is left; the pair must come to rest.
        while self.to_server or self.to_client or self.working:
            if self.to_server:
                self.deliver_to_server(len(self.to_server))
            while self.working:
                self.server_answers(0, as_error=False)
            if self.to_client:
                self.deliver_to_client(len(self.to_client))
        assert all(record.outcome is not None for record in self.sent.values())
        assert self.pair.client.requests_pending == 0
        assert self.pair.server.requests_in_flight == 0
        assert self.pair.client.next_deadline() is None
        assert self.pair.client.data_to_send() == []
        assert self.pair.server.data_to_send() == []


PairMachine.TestCase.settings = settings(max_examples=150, stateful_step_count=40, deadline=None)
TestPairOperations = PairMachine.TestCase


# The deadline bookkeeping alone, fed progress straight from the wire: many more timeouts,
# progress and clock steps per example than the pair above can afford.
DEADLINE_ARGS: dict[str, tuple[st.SearchStrategy[Any], st.SearchStrategy[Any]]] = {
    "send": (st.none() | LIMITS, st.booleans()),  # timeout, progress wanted
    "progress": (PICK, st.sampled_from([0.5, 1.0]) | st.floats(0.01, 5)),  # which, increment
    "answer": (PICK, st.booleans()),  # which, as an error
    "cancel": (PICK, st.none()),
    "time": (st.sampled_from([0.0, 0.1, 0.5, 1.0]) | st.floats(0, 4), st.none()),  # step
}
# Weighted towards progress and time, where the bookkeeping is subtle.
DEADLINE_KINDS = ("send", "send", "progress", "progress", "progress", "time", "time")
DEADLINE_OPS = st.lists(
    st.sampled_from((*DEADLINE_KINDS, "answer", "cancel")).flatmap(
        lambda kind: st.tuples(st.just(kind), *DEADLINE_ARGS[kind])
    ),
    min_size=10,
    max_size=60,
)


@settings(deadline=None, max_examples=200)
@given(version=st.sampled_from(REVISIONS), ops=DEADLINE_OPS)
# Found by this test: progress that leaves the deadline where it was (same clock reading, or
# held at the hard maximum) queued a second heap entry, and expire() then raised KeyError.
@example(
    version="2025-06-18",
    ops=[
        ("send", Timeout(1.0, reset_on_progress=True), True),
        ("progress", 0, 0.5),
        ("time", 1.0, None),
    ],
)
@example(
    version="2025-06-18",
    ops=[
        ("send", Timeout(5.0, reset_on_progress=True, maximum=2.0), True),
        ("time", 0.5, None),
        ("progress", 0, 1.0),
        ("time", 0.5, None),
        ("progress", 0, 1.0),
        ("time", 5.0, None),
    ],
)
def test_deadlines_fire_once_and_next_deadline_follows_progress(
    version: str, ops: list[tuple[str, Any, Any]]
) -> None:
    pair = make_pair()
    pair.handshake(version)
    client, now = pair.client, 0.0
    pending: dict[int, Sent] = {}
    tokens: dict[int, int] = {}  # request id -> progress token
    for op, first, second in ops:
        if op == "send":
            request_id = client.send_request("tools/list", now=now, timeout=first, progress=second)
            [out] = client.data_to_send()
            data = out.data
            assert out.id == request_id and out.method == "tools/list" and not out.final
            meta = (orjson.loads(data).get("params") or {}).get("_meta") or {}
            if "progressToken" in meta:
                tokens[request_id] = meta["progressToken"]
            soft = hard = None
            if first is not None:
                soft = None if first.timeout is None else now + first.timeout
                hard = None if first.maximum is None else now + first.maximum
            pending[request_id] = Sent("tools/list", first, first_of(soft, hard), hard)
        elif op == "progress" and tokens.keys() & pending.keys():
            listening = sorted(tokens.keys() & pending.keys())
            request_id = listening[first % len(listening)]
            record = pending[request_id]
            record.last_progress = progress = (record.last_progress or 0.0) + second
            params = {"progressToken": tokens[request_id], "progress": progress}
            notification = {"jsonrpc": "2.0", "method": "notifications/progress"}
            [event] = client.receive(orjson.dumps({**notification, "params": params}), now)
            assert isinstance(event, ProgressReceived) and event.request_id == request_id
            limit = record.timeout
            if limit is not None and limit.reset_on_progress and limit.timeout is not None:
                record.at = first_of(now + limit.timeout, record.hard_at)
        elif op == "cancel" and pending:
            request_id = sorted(pending)[first % len(pending)]
            assert client.cancel(request_id)
            client.data_to_send()
            del pending[request_id]
        elif op == "answer" and pending:
            request_id = sorted(pending)[first % len(pending)]
            reply: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "result": {}}
            if second:
                reply = {"jsonrpc": "2.0", "id": request_id, "error": {"code": 1, "message": ""}}
            [event] = client.receive(orjson.dumps(reply), now)
            assert isinstance(event, ErrorReceived if second else ResponseReceived)
            del pending[request_id]
        elif op == "time":
            now += first
            due = sorted(i for i, r in pending.items() if r.at is not None and r.at <= now)
            events = client.expire(now)
            assert sorted(e.id for e in events if isinstance(e, RequestTimedOut)) == due
            assert len(events) == len(due)
            cancels = [orjson.loads(out.data) for out in client.data_to_send()]
            assert sorted(c["params"]["requestId"] for c in cancels) == due
            for request_id in due:
                del pending[request_id]
        assert client.requests_pending == len(pending)
        deadlines = [r.at for r in pending.values() if r.at is not None]
        assert client.next_deadline() == (min(deadlines) if deadlines else None)


# -- 4. batches at 2025-03-26 ----------------------------------------------------------------

BATCH_IDS = (1, 2, "a", "1")  # few, so requests collide and cancellations hit
POOL_IDS = st.sampled_from(BATCH_IDS)
BATCH_REQUESTS = st.builds(
    lambda msg_id, method, params: {"jsonrpc": "2.0", "id": msg_id, "method": method, **params},
    POOL_IDS,
    st.sampled_from(
        ["tools/list", "tools/list", "tools/call", "ping", "initialize", "prompts/list", "nope"]
    ),
    st.just({}) | st.just({"params": {"name": "x"}}),
)
BATCH_CANCELS = st.builds(
    lambda i: {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": i}},
    POOL_IDS,
)
BATCH_NOTIFICATIONS = st.builds(
    lambda method, params: {"jsonrpc": "2.0", "method": method, **params},
    st.sampled_from(["notifications/roots/list_changed", "notifications/progress", "x/y"]),
    st.just({}) | st.builds(lambda i: {"params": {"progressToken": i}}, POOL_IDS),
)
BATCH_KINDS = ("request",) * 4 + ("cancel",) * 2 + ("notification", "garbage")


def uses_pool_id(value: Any) -> bool:
    return type(value) is dict and valid_id(value.get("id")) and value["id"] in BATCH_IDS


BATCH_GARBAGE = (FUZZED_MESSAGES | JSON).filter(
    lambda v: not is_request(v) and not is_notification(v) and not uses_pool_id(v)
)
BATCH_ITEMS = st.sampled_from(BATCH_KINDS).flatmap(
    lambda kind: {
        "request": BATCH_REQUESTS,
        "cancel": BATCH_CANCELS,
        "notification": BATCH_NOTIFICATIONS,
        "garbage": BATCH_GARBAGE,
    }[kind]
)


@settings(deadline=None, max_examples=150)
@given(
    items=st.lists(BATCH_ITEMS, min_size=1, max_size=12),
    outside=st.none() | POOL_IDS,
    data=st.data(),
)
def test_batch_gets_one_array_with_one_answer_per_request(
    items: list[Any], outside: Any, data: st.DataObject
) -> None:
    pair = make_pair()
    pair.handshake(BATCH_REVISION)
    server = pair.server
    if outside is not None:  # a request already in flight, outside the batch
        request = {"jsonrpc": "2.0", "id": outside, "method": "tools/list"}
        [event] = server.receive(orjson.dumps(request), 0)
        assert isinstance(event, RequestReceived)

    events = server.receive(orjson.dumps(items), 0)

    live: set[Any] = set()  # batch requests awaiting our answer
    left_out: Counter[Any] = Counter()  # batch requests the batch itself cancelled
    for event in events:
        if isinstance(event, RequestReceived):
            assert event.id not in live and event.id != outside
            live.add(event.id)
        elif isinstance(event, RequestCancelled):
            if event.id in live:
                live.remove(event.id)
                left_out[event.id] += 1
            else:
                assert event.id == outside
                outside = None
    tally(f"batch: {len(live)} to answer, {sum(left_out.values())} cancelled inside")
    requests = Counter(item["id"] for item in items if is_request(item))
    garbage = [item for item in items if not is_request(item) and not is_notification(item)]

    answers: list[Any] = []
    ours: dict[Any, dict[str, Any]] = {}
    order = data.draw(st.permutations(sorted(live, key=repr)), label="answer order")
    for position, request_id in enumerate(order):
        assert take_answers(server) == [], "the batch answer went out before it was complete"
        if data.draw(st.booleans(), label=f"error for {request_id!r}"):
            ours[request_id] = {"code": -32000, "message": f"no {position}"}
            assert server.send_error(request_id, -32000, f"no {position}")
        else:
            ours[request_id] = {"n": position}
            assert server.send_result(request_id, {"n": position})
    answers = take_answers(server)

    if not requests and not garbage:
        assert answers == []
    owed = requests - left_out
    if not owed and not garbage:
        assert answers == []
    if answers:
        [array] = answers
        assert type(array) is list
    replies = flat(answers)
    ours_by_id = [r for r in replies if valid_id(r["id"]) and r["id"] in BATCH_IDS]
    assert Counter(r["id"] for r in ours_by_id) == +owed
    others = [r for r in replies if not (valid_id(r["id"]) and r["id"] in BATCH_IDS)]
    assert len(others) <= len(garbage)
    for request_id, expected in ours.items():  # our own answer is among them
        assert any(
            r["id"] == request_id
            and type(r["id"]) is type(request_id)
            and expected in (r.get("result"), r.get("error"))
            for r in replies
        )
    if outside is not None:  # the request outside the batch is answered on its own
        assert server.send_result(outside, {})
        [single] = take_answers(server)
        assert type(single) is dict and single["id"] == outside
    assert server.requests_in_flight == 0
