"""`client.listen(...)`: one loop over change notifications, in either era.

Per-request era (basic/patterns/subscriptions.mdx): one `subscriptions/listen` request per
`Subscription`. Its notifications carry `_meta["io.modelcontextprotocol/subscriptionId"]`,
the request's JSON-RPC id, which is how they are told apart on stdio (over HTTP each
subscription has its own response stream, and the same routing applies). The first message,
`notifications/subscriptions/acknowledged`, says what the server agreed to; entering the
`async with` waits for it. Leaving cancels the request (stdio: `notifications/cancelled`; HTTP:
the stream is closed). A server that ends the subscription answers the request: iteration
stops. A connection that drops ends it with the error.

Handshake era: the same filter maps onto what that era has — `list_changed`
notifications the server declared, and `resources/subscribe` for each URI (unsubscribed on
exit). The acknowledgement is computed from the server's capabilities.

Both eras subscribe to what the server can deliver and say so in `acknowledged`; what it
cannot deliver is left out, never an error (subscriptions.mdx: the acknowledgement "reflects
the subset the server agreed to honor", and the client handles unsupported types
gracefully). So `listen(tools=True)` on a server that did not declare `tools.listChanged`
opens with `acknowledged == {}` in either era, as does a 2026-07-28 server without
`subscriptions/listen` (-32601); nothing is sent when the declared capabilities cover none of
the filter. Such a subscription delivers nothing and ends when it is closed. A `Subscription`
sees the client only through `ListenHost`, the few things it needs.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

from mcpkit.errors import (
    METHOD_NOT_FOUND,
    MCPError,
    ProtocolError,
    RequestTimeout,
)
from mcpkit.protocol.per_request import SUBSCRIPTION_ID

JSONObject = dict[str, Any]
logger = logging.getLogger("mcpkit.client")

ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
_LIST_FLAGS = {
    "notifications/tools/list_changed": ("toolsListChanged", "tools"),
    "notifications/prompts/list_changed": ("promptsListChanged", "prompts"),
    "notifications/resources/list_changed": ("resourcesListChanged", "resources"),
}
# What each filter entry needs the server to have declared.
_CAPABILITY: dict[str, tuple[str, str]] = {
    **{flag: (kind, "listChanged") for flag, kind in _LIST_FLAGS.values()},
    "resourceSubscriptions": ("resources", "subscribe"),
}
_END = object()


class Notification(NamedTuple):
    """One notification delivered on a subscription."""

    method: str
    params: JSONObject | None


@dataclass(frozen=True, slots=True)
class ListenHost:
    """What a Subscription needs of its client: the connected session (raises RuntimeError
    outside `async with`), the routing table, the acknowledgement timeout, the server's
    declared capabilities, and the handshake era's resources/(un)subscribe requests."""

    session: Callable[[], Any]
    listeners: Listeners
    ack_timeout: Callable[[], float | None]
    supports: Callable[..., bool]
    subscribe: Callable[[str], Awaitable[Any]]
    unsubscribe: Callable[[str], Awaitable[Any]]


class Subscription:
    """An open change-notification stream: `async with client.listen(...) as sub:` then
    `async for note in sub:`. `acknowledged` is the filter the server agreed to (a dict with
    `toolsListChanged`, `promptsListChanged`, `resourcesListChanged`, `resourceSubscriptions`).
    """

    def __init__(self, host: ListenHost, wanted: JSONObject) -> None:
        self._host = host
        self.requested = wanted
        self.acknowledged: JSONObject = {}
        self.id: Any = None
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._ack: asyncio.Future[JSONObject] = asyncio.get_running_loop().create_future()
        self._task: asyncio.Task[JSONObject] | None = None
        self._handshake_uris: list[str] = []
        self._by_filter = False  # routed by `acknowledged` (handshake era, or nothing to hear)

    # -- entering and leaving ------------------------------------------------------------------

    async def __aenter__(self) -> Subscription:
        session = self._host.session()
        if not session.connection.per_request:
            await self._open_handshake()
        elif session.connection.peer_capabilities is None or self._servable():
            await self._open_per_request(session)
        else:  # discovered, and it declared none of what the filter asks for
            logger.debug("the server declared none of %s: nothing to listen to", self.requested)
            self._open_empty()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Stop the subscription (idempotent)."""
        self._host.listeners.remove(self)
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
        uris, self._handshake_uris = self._handshake_uris, []
        for uri in uris:
            with contextlib.suppress(MCPError, RuntimeError):
                await self._host.unsubscribe(uri)
        self._queue.put_nowait(_END)

    async def _open_per_request(self, session: Any) -> None:
        listeners = self._host.listeners

        async def listen() -> JSONObject:
            # The id the connection gives the request we send next (no await in between).
            self.id = session.connection.next_request_id
            listeners.add(self)
            params = {"notifications": self.requested}
            result: JSONObject = await session.request("subscriptions/listen", params)
            return result

        self._task = asyncio.get_running_loop().create_task(listen())
        self._task.add_done_callback(self._finished)
        limit = self._host.ack_timeout()
        await asyncio.wait(
            [self._ack, self._task], timeout=limit, return_when=asyncio.FIRST_COMPLETED
        )
        if self._ack.done():
            self.acknowledged = self._ack.result()
            return
        if not self._task.done():
            await self.close()
            raise RequestTimeout("subscriptions/listen (acknowledgement)", limit or 0)
        self._host.listeners.remove(self)
        error = self._task.exception()
        if isinstance(error, ProtocolError) and error.code == METHOD_NOT_FOUND:
            # No subscriptions/listen (or not for this filter): it can deliver none of it.
            logger.debug("the server has no subscriptions/listen: nothing to listen to")
            self._task = None
            self._open_empty()
            return
        if error is not None:
            raise error
        raise SubscriptionEnded("the server ended the subscription before acknowledging it")

    def _servable(self) -> bool:
        """Whether the server's declared capabilities cover any part of the filter (a part no
        capability governs, such as `taskIds`, counts: the server's answer tells)."""
        supports = self._host.supports
        for key, wanted in self.requested.items():
            if not wanted:
                continue
            path = _CAPABILITY.get(key)
            if path is None or supports(*path):
                return True
        return False

    def _open_empty(self) -> None:
        """The server can deliver none of the filter: nothing is heard, and the subscription
        ends when it is closed or the client closes."""
        self.acknowledged = {}
        self._by_filter = True
        self._host.listeners.add(self)

    async def _open_handshake(self) -> None:
        host = self._host
        self._by_filter = True
        ack: JSONObject = {}
        for flag, kind in _LIST_FLAGS.values():
            if self.requested.get(flag) and host.supports(kind, "listChanged"):
                ack[flag] = True
        uris = self.requested.get("resourceSubscriptions") or []
        if uris and host.supports("resources", "subscribe"):
            try:
                for uri in uris:
                    await host.subscribe(uri)
                    self._handshake_uris.append(uri)
            except BaseException:
                await self.close()  # unsubscribe what was subscribed
                raise
            ack["resourceSubscriptions"] = list(uris)
        self.acknowledged = ack
        host.listeners.add(self)

    def _finished(self, task: asyncio.Task[JSONObject]) -> None:
        if task.cancelled():
            self._queue.put_nowait(_END)
            return
        error = task.exception()
        if error is not None and not self._ack.done():
            return  # failed before the acknowledgement: entering reports it (or not: -32601)
        self._queue.put_nowait(error if error is not None else _END)

    # -- delivery --------------------------------------------------------------------------

    def offer(self, method: str, params: JSONObject | None) -> None:
        """A notification for this subscription (matched by id; handshake era: filtered)."""
        if method == ACKNOWLEDGED:
            if not self._ack.done():
                agreed = (params or {}).get("notifications")
                self._ack.set_result(agreed if isinstance(agreed, dict) else {})
            return
        self._queue.put_nowait(Notification(method, params))

    def wants(self, method: str, params: JSONObject | None) -> bool:
        """Handshake era: whether this subscription's filter covers a notification."""
        flag = _LIST_FLAGS.get(method)
        if flag is not None:
            return bool(self.acknowledged.get(flag[0]))
        if method == "notifications/resources/updated":
            uri = (params or {}).get("uri")
            return uri in (self.acknowledged.get("resourceSubscriptions") or ())
        return False

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> Notification:
        item = await self._queue.get()
        if item is _END:
            self._queue.put_nowait(_END)  # every later call ends too
            raise StopAsyncIteration
        if isinstance(item, BaseException):
            self._queue.put_nowait(_END)
            raise item
        return item  # type: ignore[no-any-return]


class SubscriptionEnded(MCPError):
    """The server ended a subscription before acknowledging it."""


class Listeners:
    """The client's open subscriptions; routes each notification to the ones it belongs to."""

    def __init__(self) -> None:
        self._by_id: dict[tuple[type, Any], Subscription] = {}
        self._by_filter: list[Subscription] = []

    def add(self, subscription: Subscription) -> None:
        if subscription._by_filter:
            self._by_filter.append(subscription)
        else:
            self._by_id[_key(subscription.id)] = subscription

    def remove(self, subscription: Subscription) -> None:
        if subscription in self._by_filter:
            self._by_filter.remove(subscription)
        if self._by_id.get(_key(subscription.id)) is subscription:
            del self._by_id[_key(subscription.id)]

    def route(self, method: str, params: JSONObject | None) -> None:
        meta = params.get("_meta") if isinstance(params, dict) else None
        if isinstance(meta, dict) and SUBSCRIPTION_ID in meta:
            target = self._by_id.get(_key(meta[SUBSCRIPTION_ID]))
            if target is not None:
                target.offer(method, params)
            return
        for subscription in self._by_filter:
            if subscription.wants(method, params):
                subscription.offer(method, params)

    def end_all(self) -> None:
        for subscription in [*self._by_id.values(), *self._by_filter]:
            subscription._queue.put_nowait(_END)
        self._by_id.clear()
        self._by_filter.clear()


def listen_filter(
    *, tools: bool, prompts: bool, resources: bool, resource_uris: list[str] | None
) -> JSONObject:
    wanted: JSONObject = {}
    if tools:
        wanted["toolsListChanged"] = True
    if prompts:
        wanted["promptsListChanged"] = True
    if resources:
        wanted["resourcesListChanged"] = True
    if resource_uris:
        wanted["resourceSubscriptions"] = list(resource_uris)
    return wanted


def _key(value: Any) -> tuple[type, Any]:
    return type(value), value
