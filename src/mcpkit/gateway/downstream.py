"""What an upstream sends back, carried to the downstream client that owns it.

How this works: every handshake-era downstream session gets its own upstream `Client`
(`upstreams.py`), configured here to answer for that session. The upstream's requests
(sampling, elicitation, roots) are declared only when the downstream client declared them,
and each is asked of the downstream client on its session; its notifications (log messages,
list_changed, resources/updated, elicitation/complete) are sent to that session. A request
the upstream makes while serving a call is related to the downstream request being
forwarded (over HTTP it then travels on that request's stream, not the GET stream).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from mcpkit.client import ClientOptions, Elicitation, Sampling
from mcpkit.errors import MCPError
from mcpkit.protocol.per_request import SUBSCRIPTION_ID

if TYPE_CHECKING:
    from mcpkit.runtime import Peer
    from mcpkit.types import (
        CreateMessageRequestParams,
        ElicitRequestFormParams,
        ElicitRequestURLParams,
    )

JSONObject = dict[str, Any]
RequestId = str | int
logger = logging.getLogger("mcpkit.gateway")

# The upstream notifications a downstream session is told (progress goes with its request;
# cancellations are the protocol core's).
FORWARDED_NOTIFICATIONS = frozenset(
    {
        "notifications/message",
        "notifications/tools/list_changed",
        "notifications/prompts/list_changed",
        "notifications/resources/list_changed",
        "notifications/resources/updated",
        "notifications/elicitation/complete",
        "notifications/tasks/status",  # the session's own tasks (its own upstream session)
    }
)


Ask = Callable[[str, "JSONObject | None"], Awaitable[JSONObject]]
Notify = Callable[[str, "JSONObject | None"], None]


def relay_options(
    base: ClientOptions, declared: JSONObject, ask: Ask, notify: Notify | None
) -> ClientOptions:
    """`base` with handlers that `ask(method, params)` the downstream client for what it
    `declared` (sampling, elicitation, roots: declared upstream too), and `notify` (None:
    `base`'s) for the upstream's notifications."""
    relay = _Relay(ask)
    sampling = declared.get("sampling")
    elicitation = declared.get("elicitation")
    return dataclasses.replace(
        base,
        sampling=relay.sampling(sampling) if isinstance(sampling, dict) else None,
        elicitation=relay.elicitation(elicitation) if isinstance(elicitation, dict) else None,
        roots=relay.roots if isinstance(declared.get("roots"), dict) else None,
        on_notification=base.on_notification if notify is None else notify,
    )


class Downstream:
    """One downstream session, as its upstream client's handlers and callbacks reach it."""

    def __init__(self, peer: Peer) -> None:
        self.peer = peer
        self.in_flight: list[RequestId] = []  # downstream requests being forwarded, in order

    def client_options(self, base: ClientOptions, declared: JSONObject) -> ClientOptions:
        """`base` answering for this session: see `relay_options`."""
        return relay_options(base, declared, self.ask, self.notify)

    def related(self) -> RequestId | None:
        """The downstream request an upstream request most likely serves: the newest one
        being forwarded (None: outside any, the session's own stream)."""
        return self.in_flight[-1] if self.in_flight else None

    async def ask(self, method: str, params: JSONObject | None) -> JSONObject:
        """Ask the downstream client; its error answer is raised (ProtocolError) and so goes
        back upstream as the same error."""
        return await self.peer.request(method, params, related_id=self.related())

    def notify(self, method: str, params: JSONObject | None) -> None:
        if method not in FORWARDED_NOTIFICATIONS:
            return
        try:
            self.peer.notify(method, unsubscribed(params))
        except MCPError as exc:  # the session ended, or it may not receive this one
            logger.debug("not forwarded downstream: %s (%s)", method, exc)


def unsubscribed(params: JSONObject | None) -> JSONObject | None:
    """`params` without the subscription id of the proxy's own upstream listen (it came on
    one): the session did not open that subscription, and a client routing by the id would
    drop the notification."""
    meta = params.get("_meta") if params is not None else None
    if type(meta) is not dict or SUBSCRIPTION_ID not in meta:
        return params
    assert params is not None
    rest = {key: value for key, value in meta.items() if key != SUBSCRIPTION_ID}
    out = {key: value for key, value in params.items() if key != "_meta"}
    if rest:
        out["_meta"] = rest
    return out


class _Relay:
    """The upstream client's sampling, elicitation and roots handlers, as `ask` calls."""

    def __init__(self, ask: Ask) -> None:
        self.ask = ask

    def sampling(self, declared: JSONObject) -> Sampling:
        return Sampling(self.sample, tools="tools" in declared, context="context" in declared)

    def elicitation(self, declared: JSONObject) -> Elicitation:
        # An empty elicitation capability means forms (before 2025-11-25 there were no modes).
        url = "url" in declared
        return Elicitation(self.elicit, form="form" in declared or not url, url=url)

    async def sample(self, params: CreateMessageRequestParams) -> JSONObject:
        return await self.ask("sampling/createMessage", params.to_wire())

    async def elicit(self, params: ElicitRequestFormParams | ElicitRequestURLParams) -> JSONObject:
        return await self.ask("elicitation/create", params.to_wire())

    async def roots(self) -> list[JSONObject]:
        answer = await self.ask("roots/list", None)
        roots = answer.get("roots")
        return roots if isinstance(roots, list) else []
