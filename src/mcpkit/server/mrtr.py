"""Multi round-trip requests (2026-07-28): asking the client without sending it a request.

How this works. In the handshake era `ctx.elicit()`, `ctx.sample()`, `ctx.list_roots()` and
`ctx.elicit_url()` send a server->client request and wait for its answer. At 2026-07-28 a
server sends no requests; a tools/call, prompts/get or resources/read may instead answer
`{"resultType": "input_required", "inputRequests": {...}, "requestState": "..."}` and the
client retries the same request with `inputResponses` (and the state echoed back).

The handler code is the same in both eras. For a 2026-07-28 request the server gives the
handler run a `Round`: each ask gets a key from its call order within the run ("elicit-1",
"sample-2", "roots-3", ...), or the one the handler named (`ctx.elicit(...,
key="user_name")`; a named ask still takes its place in the count, so the generated keys do
not shift). An ask whose key has an answer — in this request's `inputResponses`, or among
the answers carried in the verified `requestState` — returns it at once, parsed as the
handshake-era answer would be. An ask with no answer stops the handler (`InputNeeded`,
which derives from BaseException so `except Exception` in handler code does not swallow it)
and the server answers input_required. The retry runs the handler again *from the start*:
code before an ask runs once per round, so keep it idempotent (or ask first, act after).
`requestState` carries every answer used so far, sealed (AES-GCM, bound to the method, a
digest of the request's params, the principal and a deadline) by `RequestStateCodec`, so
round 3 still sees the answers of rounds 1 and 2.

Asks must come in the same order on every run for the keys to match their answers.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from mcpkit.errors import InvalidParams
from mcpkit.protocol import Prepared
from mcpkit.runtime.principal import Principal
from mcpkit.server.asks import InputNeeded, Round
from mcpkit.server.context import Context

if TYPE_CHECKING:  # imported when a round needs it: the AES-GCM codec loads `cryptography`
    from mcpkit.server.request_state import RequestStateCodec

JSONObject = dict[str, Any]
Outcome = JSONObject | Prepared | Awaitable[JSONObject | Prepared]


def begin(ctx: Context, codec: Callable[[], RequestStateCodec]) -> Round | None:
    """The round of a per-request-era tools/call, prompts/get or resources/read: the answers in its
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

    opener = codec()
    payload = opener.open(
        token,
        method=ctx.request.method,
        digest=request_digest(params),
        principal=principal_id(ctx.principal),
        now=opener.clock(),
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
    """Run `handler` for a per-request-era request that may answer input_required."""
    try:
        outcome = handler(ctx)
    except InputNeeded as exc:
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
    except InputNeeded as exc:
        return input_required(ctx, exc, codec())


def input_required(ctx: Context, exc: InputNeeded, codec: RequestStateCodec) -> JSONObject:
    """The InputRequiredResult for what the handler asked, with the answers so far sealed."""
    from mcpkit.server.request_state import request_digest

    used = ctx.round.used if ctx.round is not None else {}
    state = codec.seal(
        {"answers": used},
        method=ctx.request.method,
        digest=request_digest(ctx.params),
        principal=principal_id(ctx.principal),
        now=codec.clock(),
    )
    return {"resultType": "input_required", "inputRequests": exc.requests, "requestState": state}


def principal_id(principal: Principal | None) -> str | None:
    """The string a request state is bound to (None without authorization)."""
    return None if principal is None else principal.key
