"""Multi round-trip requests (2026-07-28): asking the client without sending it a request.

How this works. In the handshake era `ctx.elicit()`, `ctx.sample()`, `ctx.list_roots()` and
`ctx.elicit_url()` send a server->client request and wait for its answer. At 2026-07-28 a
server sends no requests; a tools/call, prompts/get or resources/read may instead answer
`{"resultType": "input_required", "inputRequests": {...}, "requestState": "..."}` and the
client retries the same request with `inputResponses` (and the state echoed back).

The handler code is the same in both eras. For a modern request the server gives the handler
run a `Round`: each ask gets a key from its call order within the run ("elicit-1",
"sample-2", "roots-3", ...), or the one the handler named (`ctx.elicit(...,
key="user_name")`; a named ask still takes its place in the count, so the generated keys do
not shift). An ask whose key has an answer — in this request's `inputResponses`, or among
the answers carried in the verified `requestState` — returns it at once, parsed as the
handshake-era answer would be. An ask with no answer stops the handler (`InputRequired`,
which derives from BaseException so `except Exception` in handler code does not swallow it)
and the server answers input_required. The retry runs the handler again *from the start*:
code before an ask runs once per round, so keep it idempotent (or ask first, act after).
`requestState` carries every answer used so far, sealed (AES-GCM, bound to the method, a
digest of the request's params, the principal and a deadline) by `RequestStateCodec`, so
round 3 still sees the answers of rounds 1 and 2.

Asks must come in the same order on every run for the keys to match their answers.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcpkit.errors import INTERNAL_ERROR, InvalidParams, ProtocolError
from mcpkit.protocol import Prepared
from mcpkit.protocol.modern import missing_capability

if TYPE_CHECKING:
    from mcpkit.server.context import Context
    from mcpkit.server.request_state import RequestStateCodec

JSONObject = dict[str, Any]
Outcome = JSONObject | Prepared | Awaitable[JSONObject | Prepared]
logger = logging.getLogger("mcpkit.server")

# The key prefix of each kind of ask ("elicit-1", "sample-2", "roots-3").
_KEY_PREFIX = {
    "elicitation/create": "elicit",
    "sampling/createMessage": "sample",
    "roots/list": "roots",
}


class InputRequired(BaseException):
    """A modern request's handler asked for input the client has not given yet.

    Raised by the asking `Context` methods and caught by the server, which answers with
    resultType "input_required". A BaseException, so `except Exception` lets it through.
    """

    def __init__(self, requests: dict[str, JSONObject]) -> None:
        super().__init__(", ".join(requests))
        self.requests = requests


@dataclass(frozen=True, slots=True)
class Ask:
    """One thing a handler asks the client: the request, what parses its answer, the
    client capability it needs (`needs(capabilities)` -> the missing ones, or None) and,
    optionally, the key of its InputRequest (None: generated from the call order)."""

    method: str
    params: JSONObject | None
    parse: Callable[[JSONObject], Any]
    needs: Callable[[JSONObject], JSONObject | None]
    key: str | None = None

    def request(self) -> JSONObject:
        """The InputRequest object (method and params)."""
        if self.params is None:
            return {"method": self.method}
        return {"method": self.method, "params": self.params}


class Round:
    """One run of a handler serving a modern request that may ask the client.

    `answers` are what the client has given (carried state and this request's
    inputResponses); `used` collects those the run consumed, to be carried forward.
    """

    __slots__ = ("answers", "asked", "count", "used")

    def __init__(self, answers: JSONObject) -> None:
        self.answers = answers
        self.used: JSONObject = {}
        self.asked: set[str] = set()
        self.count = 0

    def resolve(self, asks: Sequence[Ask], capabilities: JSONObject) -> list[Any]:
        """The parsed answers of `asks`, in order.

        Raises ProtocolError -32021 when an unanswered ask needs a capability the request
        did not declare, InputRequired when some are unanswered, ValueError for a key
        already asked in this run, and whatever an ask's parser raises (ValueError for an
        answer that does not fit).
        """
        keys = []
        for ask in asks:
            self.count += 1
            key = ask.key or f"{_KEY_PREFIX.get(ask.method, 'input')}-{self.count}"
            # Two asks under one key would share (and overwrite) one answer.
            if key in keys or key in self.asked:
                raise ValueError(f"input request key {key!r} is already used in this request")
            keys.append(key)
        self.asked.update(keys)
        pending: dict[str, Ask] = {}
        for key, ask in zip(keys, asks, strict=True):
            answer = self.answers.get(key)
            if answer is None:
                pending[key] = ask
            else:
                self.used[key] = answer
        if pending:
            required: JSONObject = {}
            for ask in pending.values():
                _merge(required, ask.needs(capabilities) or {})
            if required:
                raise missing_capability(required)
            raise InputRequired({key: ask.request() for key, ask in pending.items()})
        return [ask.parse(self.answers[key]) for key, ask in zip(keys, asks, strict=True)]


def _merge(into: JSONObject, more: JSONObject) -> None:
    for name, value in more.items():
        current = into.get(name)
        if isinstance(current, dict) and isinstance(value, dict):
            _merge(current, value)
        else:
            into[name] = value


# -- capabilities an ask needs ------------------------------------------------------------------


def needs_form_elicitation(capabilities: JSONObject) -> JSONObject | None:
    """Form mode: `elicitation` declared, empty (form only) or with `form`."""
    elicitation = capabilities.get("elicitation")
    if isinstance(elicitation, dict) and (not elicitation or "form" in elicitation):
        return None
    return {"elicitation": {"form": {}}}


def needs_url_elicitation(capabilities: JSONObject) -> JSONObject | None:
    elicitation = capabilities.get("elicitation")
    if isinstance(elicitation, dict) and "url" in elicitation:
        return None
    return {"elicitation": {"url": {}}}


def sampling_needs(params: JSONObject) -> Callable[[JSONObject], JSONObject | None]:
    """Sampling; `sampling.tools` for a request with tools, `sampling.context` for one that
    includes context from servers (deprecated)."""
    wanted: JSONObject = {}
    if params.get("tools") is not None:
        wanted["tools"] = {}
    if params.get("includeContext") in ("thisServer", "allServers"):
        wanted["context"] = {}

    def needs(capabilities: JSONObject) -> JSONObject | None:
        sampling = capabilities.get("sampling")
        if not isinstance(sampling, dict):
            return {"sampling": wanted}
        lacking = {name: {} for name in wanted if name not in sampling}
        return {"sampling": lacking} if lacking else None

    return needs


def needs_roots(capabilities: JSONObject) -> JSONObject | None:
    return None if isinstance(capabilities.get("roots"), dict) else {"roots": {}}


# -- the server side ----------------------------------------------------------------------------


def begin(ctx: Context, codec: Callable[[], RequestStateCodec]) -> Round | None:
    """The round of a modern tools/call, prompts/get or resources/read: the answers in its
    inputResponses and in its requestState (verified). None for a first round, which carries
    neither (`Context.gather_input` starts an empty round if the handler asks).

    Raises InvalidParams (-32602): inputResponses not an object of objects, a requestState
    that is not a string or fails verification (tampered, expired, another request's or
    another principal's).
    """
    params = ctx.params
    responses = params.get("inputResponses")
    token = params.get("requestState")
    if responses is None and token is None:
        return None
    if responses is None:
        responses = {}
    elif type(responses) is not dict or any(type(v) is not dict for v in responses.values()):
        raise InvalidParams(
            "Invalid params: inputResponses must be an object mapping each key of the "
            "inputRequests to the client's result (an object)"
        )
    if token is None:
        return Round(dict(responses))
    if type(token) is not str:
        raise InvalidParams("Invalid params: requestState must be the string the server gave")
    from mcpkit.server.request_state import request_digest

    payload = codec().open(
        token,
        method=ctx.request.method,
        digest=request_digest(params),
        principal=principal_id(ctx.principal),
        now=time.time(),
    )
    carried = payload.get("answers")
    # Answers already given (and sealed) win over a retry that sends them again.
    answers = {**responses, **carried} if type(carried) is dict else dict(responses)
    return Round(answers)


def serve(
    handler: Callable[[Context], Outcome],
    ctx: Context,
    codec: Callable[[], RequestStateCodec],
) -> Outcome:
    """Run `handler` for a modern request that may answer input_required."""
    try:
        outcome = handler(ctx)
    except InputRequired as exc:
        return input_required(ctx, exc, codec())
    kind = type(outcome)
    if kind is dict or kind is Prepared:
        return outcome
    return _finish(outcome, ctx, codec)  # type: ignore[arg-type]


async def _finish(
    pending: Awaitable[JSONObject | Prepared],
    ctx: Context,
    codec: Callable[[], RequestStateCodec],
) -> JSONObject | Prepared:
    try:
        return await pending
    except InputRequired as exc:
        return input_required(ctx, exc, codec())


def input_required(ctx: Context, exc: InputRequired, codec: RequestStateCodec) -> JSONObject:
    """The InputRequiredResult for what the handler asked, with the answers so far sealed."""
    from mcpkit.server.request_state import request_digest

    used = ctx.round.used if ctx.round is not None else {}
    state = codec.seal(
        {"answers": used},
        method=ctx.request.method,
        digest=request_digest(ctx.params),
        principal=principal_id(ctx.principal),
        now=time.time(),
    )
    return {"resultType": "input_required", "inputRequests": exc.requests, "requestState": state}


def cannot_ask(ctx: Context, method: str) -> ProtocolError:
    """An ask during a modern request that cannot answer input_required (logged)."""
    version = ctx.protocol_version
    message = (
        f"Internal error: the handler of {ctx.request.method} tried to send {method}, but a "
        f"server cannot ask the client during {ctx.request.method} at {version} (only "
        "tools/call, prompts/get and resources/read may answer input_required)"
    )
    logger.error("%s", message)
    return ProtocolError(INTERNAL_ERROR, message)


def principal_id(principal: Any) -> str | None:
    """The string a request state is bound to: the principal itself when it is a string,
    its `subject` (or `id`) attribute otherwise, None without one."""
    if principal is None or type(principal) is str:
        return principal
    for name in ("subject", "id", "client_id"):
        value = getattr(principal, name, None)
        if isinstance(value, str):
            return value
    return str(principal)
