"""What a handler asks the client, in either era: `Ask`s, and the `Round` that answers them.

An `Ask` is one request for input (sampling, elicitation, roots) with the parser of its
answer and the client capability it needs. In the handshake era `Context` sends each as a
request; for a 2026-07-28 request a `Round` resolves them from the answers the client has
given, or stops the handler with `InputNeeded` (see `mrtr` for the whole mechanism).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from mcpkit.errors import INTERNAL_ERROR, ProtocolError
from mcpkit.protocol.per_request import missing_capability

JSONObject = dict[str, Any]
logger = logging.getLogger("mcpkit.server")

# Where a handshake-era request carries its ask's own key (`key=`), so that a bridge to a
# 2026-07-28 client (mcpkit proxy) names its input_required ask as this server would.
INPUT_KEY_META = "mcpkit/inputKey"
# Where a handshake-era tool error caused by a client capability the client did not declare
# names it ({"sampling": {}}), so that such a bridge answers its client -32021 for it.
MISSING_CAPABILITY_META = "mcpkit/missingCapability"
# The key prefix of each kind of ask ("elicit-1", "sample-2", "roots-3").
_KEY_PREFIX = {
    "elicitation/create": "elicit",
    "sampling/createMessage": "sample",
    "roots/list": "roots",
}


def capability_object(path: tuple[str, ...]) -> JSONObject:
    """A capability path as the object declaring it: ("elicitation", "url") ->
    {"elicitation": {"url": {}}}."""
    found: JSONObject = {}
    for name in reversed(path):
        found = {name: found}
    return found


class InputNeeded(BaseException):
    """A per-request-era request's handler asked for input the client has not given yet.

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

    def handshake_params(self) -> JSONObject | None:
        """The params of its handshake-era request: with its own key (if any) in `_meta`."""
        if self.key is None:
            return self.params
        params = dict(self.params or {})
        params["_meta"] = {**(params.get("_meta") or {}), INPUT_KEY_META: self.key}
        return params

    def request(self) -> JSONObject:
        """The InputRequest object (method and params)."""
        if self.params is None:
            return {"method": self.method}
        return {"method": self.method, "params": self.params}


class AskKeys:
    """The keys of a run's asks: each its own (`ask.key`) or made from its kind and call
    order ("elicit-1", "sample-2"), never two alike (`count` asks so far, `asked` keys)."""

    __slots__ = ("asked", "count")

    def __init__(self, count: int = 0) -> None:
        self.count = count
        self.asked: set[str] = set()

    def keys(self, asks: Sequence[Ask]) -> list[str]:
        """Raises ValueError for a key already asked."""
        keys = []
        for ask in asks:
            self.count += 1
            key = ask.key or f"{_KEY_PREFIX.get(ask.method, 'input')}-{self.count}"
            # Two asks under one key would share (and overwrite) one answer.
            if key in keys or key in self.asked:
                raise ValueError(f"input request key {key!r} is already used in this request")
            keys.append(key)
        self.asked.update(keys)
        return keys


def missing_for(asks: Iterable[Ask], capabilities: JSONObject) -> JSONObject:
    """The client capabilities these asks need and `capabilities` lacks ({}: none)."""
    required: JSONObject = {}
    for ask in asks:
        _merge(required, ask.needs(capabilities) or {})
    return required


class Round(AskKeys):
    """One run of a handler serving a per-request-era request that may ask the client.

    `answers` are what the client has given (carried state and this request's
    inputResponses); `used` collects those the run consumed, to be carried forward.
    """

    __slots__ = ("answers", "used")

    def __init__(self, answers: JSONObject) -> None:
        super().__init__()
        self.answers = answers
        self.used: JSONObject = {}

    def resolve(self, asks: Sequence[Ask], capabilities: JSONObject) -> list[Any]:
        """The parsed answers of `asks`, in order.

        Raises ProtocolError -32021 when an unanswered ask needs a capability the request
        did not declare, InputNeeded when some are unanswered, ValueError for a key
        already asked in this run, and whatever an ask's parser raises (ValueError for an
        answer that does not fit).
        """
        keys = self.keys(asks)
        pending: dict[str, Ask] = {}
        for key, ask in zip(keys, asks, strict=True):
            answer = self.answers.get(key)
            if answer is None:
                pending[key] = ask
            else:
                self.used[key] = answer
        if pending:
            required = missing_for(pending.values(), capabilities)
            if required:
                raise missing_capability(required)
            raise InputNeeded({key: ask.request() for key, ask in pending.items()})
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
        lacking: JSONObject = {name: {} for name in wanted if name not in sampling}
        return {"sampling": lacking} if lacking else None

    return needs


def needs_roots(capabilities: JSONObject) -> JSONObject | None:
    return None if isinstance(capabilities.get("roots"), dict) else {"roots": {}}


def cannot_ask(method: str, version: str | None, asked: str) -> ProtocolError:
    """An ask (`asked`) while serving a 2026-07-28 `method` that cannot answer input_required."""
    message = (
        f"Internal error: the handler of {method} tried to send {asked}, but a server cannot "
        f"ask the client during {method} at {version} (only tools/call, prompts/get and "
        "resources/read may answer input_required)"
    )
    logger.error("%s", message)
    return ProtocolError(INTERNAL_ERROR, message)
