"""What the core hands a transport: each outgoing message with the facts it is routed by.

The core knows, when it queues a message, which request it belongs to, whether it is that
request's answer, the error code of an error answer and, for an `initialize` result, the
revision agreed. A transport reads those facts here instead of re-parsing or sniffing the
bytes: the HTTP server ends a response stream on `final`, picks a 2026-07-28 status from
`code` and remembers a session's revision from `version`; the HTTP client builds a request's
headers from `method`, `id`, `params` and `version`. stdio only needs `data`.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from mcpkit.protocol.jsonrpc import RequestId

JSONObject = dict[str, Any]

# What a server tells every client alike when something changed for all (runtime/fanout.py).
FANNED_OUT = frozenset(
    {
        "notifications/resources/updated",
        "notifications/tools/list_changed",
        "notifications/prompts/list_changed",
        "notifications/resources/list_changed",
    }
)


class Outgoing(NamedTuple):
    """One serialized JSON-RPC message (no framing) and what it is.

    - `related`: the peer's request this message belongs to (its answer, progress or log
      notifications about it, our requests made while serving it); None for the rest.
    - `final`: this is the answer to `related` (for a 2025-03-26 batch: the array answering
      every request of the batch, `related` naming its first). An answer to a message whose
      id could not be read is final with `related` None.
    - `code`: the JSON-RPC error code of an error answer (None for results).
    - `version`: the revision agreed by an `initialize` result we send (None when it failed)
      or confirmed by the `notifications/initialized` we send as a client, or the
      per-request revision a 2026-07-28 request of ours carries.
    - `method`, `id`, `params`: for our requests (`id` set) and notifications (`id` None),
      what was sent; None for answers.
    - `fanned`: a notification a server tells each of its clients alike (`FANNED_OUT`): a
      server on several workers has every worker tell its own, so a transport serving one
      session from several workers sends it from one of them only.
    """

    data: bytes
    related: RequestId | None = None
    final: bool = False
    code: int | None = None
    version: str | None = None
    method: str | None = None
    id: RequestId | None = None
    params: JSONObject | None = None
    fanned: bool = False

    @property
    def is_request(self) -> bool:
        return self.id is not None

    @property
    def is_notification(self) -> bool:
        return self.method is not None and self.id is None


def answer(data: bytes, request_id: RequestId | None, code: int | None = None) -> Outgoing:
    """The final answer to the peer's request `request_id` (`code` for an error answer)."""
    return Outgoing(data, request_id, True, code)
