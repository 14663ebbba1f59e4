"""Tasks on the wire (mcpkit.protocol.tasks): how one task record is shown in each era, and how
the task fields of a request are read. Pure functions: no event loop."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from mcpkit.errors import MISSING_REQUIRED_CLIENT_CAPABILITY
from mcpkit.protocol.tasks import (
    EXTENSION,
    RELATED_TASK,
    create_result,
    declares_extension,
    extension_required,
    handshake_capabilities,
    per_request_capabilities,
    related_meta,
    requested_ttl,
    task_id_of,
    task_wire,
    timestamp,
    with_related,
    without_related,
)

JSONObject = dict[str, Any]


@dataclass
class Record:
    """A stored task as `TaskView` describes it."""

    task_id: str = "t1"
    status: str = "working"
    status_message: str | None = None
    created_at: float = 0.0
    updated_at: float = 1.5
    ttl_ms: int | None = 60_000
    poll_interval_ms: int | None = None
    result: JSONObject | None = None
    error: JSONObject | None = None
    input_requests: JSONObject | None = None


@pytest.mark.parametrize(
    ("capabilities", "declared"),
    [
        (None, False),
        ({}, False),
        ({"extensions": None}, False),
        ({"extensions": []}, False),
        ({"extensions": {EXTENSION: True}}, False),
        ({"extensions": {"other/ext": {}}}, False),
        ({"extensions": {EXTENSION: {}}}, True),
    ],
)
def test_declares_extension_only_as_an_object(capabilities: Any, declared: bool) -> None:
    assert declares_extension(capabilities) is declared


def test_extension_required_names_the_extension() -> None:
    error = extension_required()
    assert error.code == MISSING_REQUIRED_CLIENT_CAPABILITY
    assert error.data == {"requiredCapabilities": {"extensions": {EXTENSION: {}}}}


def test_capabilities_reshaped_per_era() -> None:
    plain = {"tools": {}}
    assert per_request_capabilities(plain) is plain  # nothing to move: the same object
    shaped = per_request_capabilities({"tools": {}, "tasks": {"list": {}}, "extensions": {"x": {}}})
    assert shaped == {"tools": {}, "extensions": {"x": {}, EXTENSION: {}}}
    assert handshake_capabilities(plain) is plain
    assert handshake_capabilities({"tools": {}, "extensions": {EXTENSION: {}}}) == {"tools": {}}


@pytest.mark.parametrize(
    ("params", "ttl"),
    [(None, False), ({}, False), ({"task": {}}, None), ({"task": {"ttl": 0}}, 0)],
)
def test_requested_ttl(params: JSONObject | None, ttl: int | bool | None) -> None:
    assert requested_ttl(params) == ttl
    assert type(requested_ttl(params)) is type(ttl)  # False is not 0


@pytest.mark.parametrize(
    "params",
    [{"task": []}, {"task": "yes"}, {"task": {"ttl": -1}}, {"task": {"ttl": 1.5}},
     {"task": {"ttl": True}}, {"task": {"ttl": "10"}}],
)  # fmt: skip
def test_requested_ttl_refuses_malformed(params: JSONObject) -> None:
    with pytest.raises(ValueError, match=r"params\.task"):
        requested_ttl(params)


def test_related_meta_added_and_removed() -> None:
    assert related_meta("t9") == {RELATED_TASK: {"taskId": "t9"}}
    plain = {"content": []}
    tied = with_related(plain, "t9")
    assert tied == {"content": [], "_meta": {RELATED_TASK: {"taskId": "t9"}}}
    assert "_meta" not in plain  # the original is left alone
    kept = with_related({"_meta": {"k": 1}}, "t9")
    assert kept["_meta"] == {"k": 1, RELATED_TASK: {"taskId": "t9"}}
    assert with_related({"_meta": "junk"}, "t9")["_meta"] == related_meta("t9")
    assert without_related(tied) == plain
    assert without_related(kept) == {"_meta": {"k": 1}}
    untied = {"_meta": {"k": 1}}
    assert without_related(untied) is untied
    assert without_related({"_meta": None}) == {"_meta": None}


@pytest.mark.parametrize("params", [None, {}, {"taskId": 3}, {"taskId": None}])
def test_task_id_must_be_a_string(params: JSONObject | None) -> None:
    with pytest.raises(ValueError, match="taskId"):
        task_id_of(params)
    assert task_id_of({"taskId": "abc"}) == "abc"


def test_timestamp_is_utc_to_the_millisecond() -> None:
    assert timestamp(0.0) == "1970-01-01T00:00:00.000Z"
    assert timestamp(1.2345) == "1970-01-01T00:00:01.234Z"


def test_handshake_shape() -> None:
    record = Record(status_message="half way", poll_interval_ms=500)
    assert task_wire(record, per_request=False) == {
        "taskId": "t1",
        "status": "working",
        "statusMessage": "half way",
        "createdAt": "1970-01-01T00:00:00.000Z",
        "lastUpdatedAt": "1970-01-01T00:00:01.500Z",
        "ttl": 60_000,
        "pollInterval": 500,
    }
    assert create_result(record, per_request=False) == {
        "task": task_wire(record, per_request=False)
    }


def test_modern_shape_and_details_by_status() -> None:
    record = Record(ttl_ms=None)
    wire = task_wire(record, per_request=True)
    assert wire["ttlMs"] is None and "ttl" not in wire and "pollIntervalMs" not in wire
    assert create_result(record, per_request=True) == {"resultType": "task", **wire}

    done = Record(status="completed", result=with_related({"content": []}, "t1"))
    assert task_wire(done, per_request=True, detailed=True)["result"] == {"content": []}
    assert "result" not in task_wire(done, per_request=True)  # only when detailed

    failed = Record(status="failed", error={"code": -32603, "message": "boom"})
    assert task_wire(failed, per_request=True, detailed=True)["error"]["message"] == "boom"

    asking = Record(status="input_required")
    assert task_wire(asking, per_request=True, detailed=True)["inputRequests"] == {}
    questions = {"q1": {"method": "elicitation/create"}}
    asking.input_requests = questions
    assert task_wire(asking, per_request=True, detailed=True)["inputRequests"] == questions

    # A status without its payload shows nothing more (never a null result).
    bare = task_wire(Record(status="completed"), per_request=True, detailed=True)
    assert "result" not in bare and "error" not in bare
    assert "result" not in task_wire(Record(status="cancelled"), per_request=True, detailed=True)
    working = task_wire(Record(poll_interval_ms=250), per_request=True, detailed=True)
    assert working["pollIntervalMs"] == 250
    assert not {"result", "error", "inputRequests", "pollInterval"} & working.keys()
