"""`subscriptions/listen` (2026-07-28): long-lived notification streams, one per listen request.

A client opens a subscription with a filter (which list_changed kinds, which resource URIs);
the handler acknowledges the part the server honours first, then stays open. Every
notification sent on the subscription goes out related to the listen request (so on HTTP it
travels on that request's SSE stream) and carries the request id as
`_meta["io.modelcontextprotocol/subscriptionId"]` (on stdio the client demultiplexes by it).
With the tasks extension a filter may also name `taskIds`: the caller's tasks among them get
`notifications/tasks` (the task as `tasks/get` would show it) on every change of status; a
request that names task ids without declaring the extension is refused (-32021).
A subscription ends when its handler is cancelled (stdio notifications/cancelled, HTTP stream
closed) -- nothing more is sent -- or when the server ends it with `close_all()`: the handler
then returns the completion result.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from mcpkit.errors import InvalidParams, MCPError
from mcpkit.protocol import tasks
from mcpkit.protocol.per_request import SUBSCRIPTION_ID

if TYPE_CHECKING:
    from mcpkit.runtime import Peer
    from mcpkit.server.context import Context

JSONObject = dict[str, Any]
logger = logging.getLogger("mcpkit.server.subscriptions")

ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
RESOURCE_UPDATED = "notifications/resources/updated"
# Filter flag -> (the notification it opts in to, the capability that must declare it).
LIST_CHANGED: dict[str, tuple[str, str]] = {
    "toolsListChanged": ("notifications/tools/list_changed", "tools"),
    "promptsListChanged": ("notifications/prompts/list_changed", "prompts"),
    "resourcesListChanged": ("notifications/resources/list_changed", "resources"),
}
_FLAG_OF = {method: flag for flag, (method, _) in LIST_CHANGED.items()}
RESOURCE_SUBSCRIPTIONS = "resourceSubscriptions"
TASK_IDS = "taskIds"
TASK_STATUS = "notifications/tasks"
# Which of these task ids the caller of this listen request may follow (its own, live ones).
TaskFilter = Callable[["Context", list[str]], Awaitable[list[str]]]


class _Listener:
    __slots__ = ("closed", "flags", "meta", "peer", "request_id", "task", "task_ids", "uris")

    def __init__(
        self,
        peer: Peer,
        request_id: str | int,
        flags: frozenset[str],
        uris: frozenset[str],
    ) -> None:
        self.peer = peer
        self.request_id = request_id
        self.flags = flags  # honoured filter flags (toolsListChanged, ...)
        self.uris = uris  # honoured resource subscriptions
        self.task_ids: frozenset[str] = frozenset()  # honoured task ids (the extension)
        self.meta: JSONObject = {SUBSCRIPTION_ID: request_id}
        self.task = asyncio.current_task()
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def live(self) -> bool:
        task = self.task
        return not self.closed.done() and (task is None or not (task.done() or task.cancelling()))

    def send(self, method: str, params: JSONObject) -> bool:
        """One notification on this subscription; False (and closed) when it cannot go."""
        if not self.live():
            return False
        try:
            self.peer.notify(method, {"_meta": self.meta, **params}, related_id=self.request_id)
        except MCPError as exc:  # the connection closed or refuses (capability gone)
            logger.debug("subscription %r: %s not sent: %s", self.request_id, method, exc)
            return False
        return True


def parse_filter(value: Any) -> tuple[frozenset[str], frozenset[str]]:
    """The list_changed flags set to true and the resource URIs of a SubscriptionFilter.

    Raises InvalidParams (-32602) for a filter that is not an object of the right shape.
    """
    if type(value) is not dict:
        raise InvalidParams("Invalid params: notifications (the subscription filter) is required")
    flags = set()
    for flag in LIST_CHANGED:
        wanted = value.get(flag)
        if wanted is None:
            continue
        if type(wanted) is not bool:
            raise InvalidParams(f"Invalid params: notifications.{flag} must be a boolean")
        if wanted:
            flags.add(flag)
    uris = value.get(RESOURCE_SUBSCRIPTIONS)
    if uris is None:
        uris = []
    if type(uris) is not list or any(type(uri) is not str for uri in uris):
        raise InvalidParams(
            f"Invalid params: notifications.{RESOURCE_SUBSCRIPTIONS} must be a list of URIs"
        )
    return frozenset(flags), frozenset(uris)


def task_ids_of(value: Any) -> list[str]:
    """The `taskIds` of a filter (none: []). Raises InvalidParams for a malformed one."""
    ids = value.get(TASK_IDS) if type(value) is dict else None
    if ids is None:
        return []
    if type(ids) is not list or any(type(i) is not str for i in ids):
        raise InvalidParams(f"Invalid params: notifications.{TASK_IDS} must be a list of task ids")
    return list(ids)


def honoured(
    flags: frozenset[str], uris: frozenset[str], capabilities: JSONObject
) -> tuple[frozenset[str], frozenset[str]]:
    """The part of a filter a server with these capabilities can deliver."""
    kept = frozenset(
        flag for flag in flags if _declares(capabilities, LIST_CHANGED[flag][1], "listChanged")
    )
    if not _declares(capabilities, "resources", "subscribe"):
        uris = frozenset()
    return kept, uris


def _declares(capabilities: JSONObject, feature: str, flag: str) -> bool:
    declared = capabilities.get(feature)
    return type(declared) is dict and declared.get(flag) is True


class SubscriptionHub:
    """The server's open subscriptions: `listen` serves the request, `publish` and
    `resource_updated` fan notifications out, `close_all` ends them gracefully."""

    def __init__(self) -> None:
        self._listeners: dict[tuple[int, str | int], _Listener] = {}
        self._by_uri: dict[str, set[_Listener]] = {}
        self._by_task: dict[str, set[_Listener]] = {}
        self.task_filter: TaskFilter | None = None  # set by a server with task tools

    def __len__(self) -> int:
        return len(self._listeners)

    async def listen(self, ctx: Context) -> JSONObject:
        """The `subscriptions/listen` handler. Raises InvalidParams for a malformed filter."""
        wanted = ctx.params.get("notifications")
        flags, uris = parse_filter(wanted)
        task_ids = task_ids_of(wanted)
        if task_ids and not tasks.declares_extension(ctx.client_capabilities):
            raise tasks.extension_required()
        flags, uris = honoured(flags, uris, ctx.server.capabilities())
        request_id = ctx.request_id
        listener = _Listener(ctx.peer, request_id, flags, uris)
        if task_ids and self.task_filter is not None:
            listener.task_ids = frozenset(await self.task_filter(ctx, task_ids))
        acknowledged: JSONObject = dict.fromkeys(sorted(flags), True)
        if uris:
            acknowledged[RESOURCE_SUBSCRIPTIONS] = sorted(uris)
        if listener.task_ids:
            acknowledged[TASK_IDS] = sorted(listener.task_ids)
        ctx.peer.notify(
            ACKNOWLEDGED,
            {"_meta": listener.meta, "notifications": acknowledged},
            related_id=request_id,
        )
        key = (id(ctx.peer), request_id)
        previous = self._listeners.get(key)
        if previous is not None:  # the same id reused after its handler ended unnoticed
            self._drop(key, previous)
        self._listeners[key] = listener
        for uri in uris:
            self._by_uri.setdefault(uri, set()).add(listener)
        for task_id in listener.task_ids:
            self._by_task.setdefault(task_id, set()).add(listener)
        try:
            await listener.closed
        finally:
            self._drop(key, listener)
        return {"_meta": listener.meta}

    def publish(self, method: str) -> int:
        """Send a list_changed notification (`notifications/tools/list_changed`, prompts,
        resources) to every subscription that asked for it; returns how many got it.

        Raises ValueError for a method that is not a list_changed notification.
        """
        flag = _FLAG_OF.get(method)
        if flag is None:
            raise ValueError(f"not a list_changed notification: {method!r}")
        sent = 0
        for listener in list(self._listeners.values()):
            if flag in listener.flags and listener.send(method, {}):
                sent += 1
        return sent

    def resource_updated(self, uri: str, match: Callable[[str], bool] | None = None) -> int:
        """Send notifications/resources/updated to the subscriptions that named `uri` (with
        `match`, a URI template's matcher: every subscribed URI it matches)."""
        uris = [uri] if match is None else sorted(u for u in self._by_uri if match(u))
        sent = 0
        for each in uris:
            for listener in list(self._by_uri.get(each, ())):
                sent += listener.send(RESOURCE_UPDATED, {"uri": each})
        return sent

    def task_status(self, task_id: str, task: JSONObject) -> int:
        """Send notifications/tasks (the task, detailed) to the subscriptions following it."""
        sent = 0
        for listener in list(self._by_task.get(task_id, ())):
            sent += listener.send(TASK_STATUS, task)
        return sent

    def close_all(self) -> int:
        """End every subscription gracefully: each handler returns its completion result
        (sent once the event loop runs). Returns how many were ended."""
        ended = 0
        for listener in list(self._listeners.values()):
            if not listener.closed.done():
                listener.closed.set_result(None)
                ended += 1
        return ended

    async def aclose_all(self) -> int:
        """`close_all`, then wait until every ended handler has returned its result."""
        tasks = [
            listener.task
            for listener in self._listeners.values()
            if listener.task is not None and not listener.closed.done()
        ]
        ended = self.close_all()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        return ended

    def _drop(self, key: tuple[int, str | int], listener: _Listener) -> None:
        if self._listeners.get(key) is listener:
            del self._listeners[key]
        for index, keys in ((self._by_uri, listener.uris), (self._by_task, listener.task_ids)):
            for key_ in keys:
                holders = index.get(key_)
                if holders is not None:
                    holders.discard(listener)
                    if not holders:
                        del index[key_]
