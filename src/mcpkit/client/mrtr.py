"""Multi round-trip requests (2026-07-28, basic/patterns/mrtr.mdx), client side.

A per-request server that needs something from the client (a sampling answer, a form, the
roots) does not send a request of its own: it answers `tools/call`, `prompts/get` or
`resources/read` with `resultType: "input_required"`, naming its `inputRequests` and an
opaque `requestState`. The client gathers every answer (concurrently, through the same
sampling / elicitation / roots handlers that serve handshake-era servers), then retries the
original request with a new id, the original params plus `inputResponses` and the
`requestState` echoed exactly (left out when the server sent none). `Client` repeats this up
to `max_input_rounds` times.

A server asking for a kind of input this client did not declare broke the rules (the
capabilities in every envelope say what we answer): `InputRequiredError`, nothing is retried.
"""

from __future__ import annotations

import asyncio
import inspect
from dataclasses import dataclass
from typing import Any, Literal

from mcpkit.errors import InvalidResult, MCPError
from mcpkit.protocol import RequestReceived
from mcpkit.protocol.per_request import INPUT_REQUIRED_METHODS
from mcpkit.protocol.tasks import AUGMENTABLE

JSONObject = dict[str, Any]
DEFAULT_MAX_INPUT_ROUNDS = 10

# What each kind of input request needs the client to have declared (ServerRequests fields).
_FEATURES = {
    "sampling/createMessage": "sampling",
    "elicitation/create": "elicitation",
    "roots/list": "roots",
}


class InputRequiredError(MCPError):
    """An input-required round could not be completed: the server asked for input this client
    does not answer, or kept asking past the round limit."""


# What a request does with an input_required answer: answer it with the client's handlers,
# or return it to the caller (an `InputRequired`).
InputMode = Literal["answer", "return"]


@dataclass(frozen=True, slots=True)
class InputRequired:
    """A server's `InputRequiredResult` for `method` called with `params`.

    `input_requests` maps the server's keys to `{"method": ..., "params": ...}`;
    `request_state` is opaque (echo it unchanged); `result` is the raw result. Answer with
    `Client.answer_input(...)` and call again with `input_responses=` and `request_state=`.
    """

    method: str
    params: JSONObject
    input_requests: dict[str, JSONObject]
    request_state: str | None
    result: JSONObject


def result_kind(method: str, result: JSONObject) -> str:
    """ "complete", "input_required" or "task"; raises InvalidResult for anything else, or for an
    input-required answer to a method that may not have one. An absent resultType is a
    complete result (handshake-era servers send none)."""
    kind = result.get("resultType", "complete")
    if kind == "complete":
        return "complete"
    if kind == "input_required" and method in INPUT_REQUIRED_METHODS:
        return "input_required"
    if kind == "task" and method in AUGMENTABLE:
        return "task"  # the tasks extension: `call_tool` follows it (tasks.py)
    if kind == "input_required":
        raise InvalidResult(method, f"{method} may not answer with resultType input_required")
    raise InvalidResult(method, f"unknown resultType {kind!r}")


def pending_input(method: str, params: JSONObject | None, result: JSONObject) -> InputRequired:
    """The InputRequired in `result`; raises InvalidResult when it is malformed."""
    requests = result.get("inputRequests")
    state = result.get("requestState")
    if requests is None and state is None:
        raise InvalidResult(method, "an input_required result needs inputRequests or requestState")
    if requests is not None and not isinstance(requests, dict):
        raise InvalidResult(method, "inputRequests must be an object")
    if state is not None and not isinstance(state, str):
        raise InvalidResult(method, "requestState must be a string")
    for key, request in (requests or {}).items():
        if not isinstance(request, dict) or not isinstance(request.get("method"), str):
            raise InvalidResult(method, f"inputRequests[{key!r}] is not a request object")
    original = {
        k: v for k, v in (params or {}).items() if k not in ("inputResponses", "requestState")
    }
    return InputRequired(method, original, dict(requests or {}), state, result)


def retry_params(
    params: JSONObject, responses: JSONObject | None, request_state: str | None
) -> JSONObject:
    """The original params plus this round's answers and the state, exactly as received."""
    out = dict(params)
    if responses is not None:
        out["inputResponses"] = responses
    if request_state is not None:
        out["requestState"] = request_state
    return out


async def answer_all(handlers: Any, input_requests: dict[str, JSONObject]) -> JSONObject:
    """Answer every input request concurrently with `handlers` (a `ServerRequests`).

    Raises InputRequiredError for a request this client did not declare support for, and
    whatever a handler raises (ProtocolError from your handler, for example).
    """
    for key, request in input_requests.items():
        feature = _FEATURES.get(request["method"])
        if feature is None:
            raise InputRequiredError(
                f"the server asked for {request['method']!r} (input {key!r}), which is not an "
                "input request this client knows"
            )
        if getattr(handlers, feature) is None:
            raise InputRequiredError(
                f"the server asked for {request['method']} (input {key!r}) but this client "
                f"did not declare {feature}; pass {feature}= to Client(...) to answer it"
            )
    keys = list(input_requests)
    answers = await asyncio.gather(*(_answer(handlers, input_requests[k]) for k in keys))
    return dict(zip(keys, answers, strict=True))


async def _answer(handlers: Any, request: JSONObject) -> JSONObject:
    params = request.get("params")
    event = RequestReceived(0, request["method"], params if isinstance(params, dict) else {})
    outcome = handlers(None, event)
    if inspect.isawaitable(outcome):
        outcome = await outcome
    return outcome  # type: ignore[no-any-return]
