"""What the client does with the server's notifications: the user's callbacks.

- `on_log(params)`: `notifications/message`, as typed `LoggingMessageNotificationParams`
  (`level`, `logger`, `data`). Ask for a level with `client.set_logging_level(...)`.
- `on_list_changed(kind)`: `notifications/{tools,resources,prompts}/list_changed`; `kind` is
  "tools", "resources" or "prompts". (The client also forgets its cached tool definitions.)
- `on_resource_updated(uri)`: `notifications/resources/updated` for a subscribed resource.
- `on_notification(method, params)`: every notification, raw, after the typed callback —
  including ones this list does not name (`notifications/elicitation/complete`, extensions).

Progress and cancellation are not here: progress goes to the `on_progress` of the request it
belongs to, and the protocol core consumes cancellations.

Callbacks may be plain functions or coroutine functions; coroutines run in their own task so a
slow callback never stalls the connection. An exception in a callback is logged, not raised.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

if TYPE_CHECKING:
    from mcpkit.protocol import NotificationReceived
    from mcpkit.runtime import Session
    from mcpkit.types import LoggingMessageNotificationParams

JSONObject = dict[str, Any]
ListKind = Literal["tools", "resources", "prompts"]
logger = logging.getLogger("mcpkit.client")

LogHandler: TypeAlias = Callable[["LoggingMessageNotificationParams"], "Awaitable[None] | None"]
ListChangedHandler: TypeAlias = Callable[[ListKind], "Awaitable[None] | None"]
ResourceUpdatedHandler: TypeAlias = Callable[[str], "Awaitable[None] | None"]
NotificationHandler: TypeAlias = Callable[[str, "JSONObject | None"], "Awaitable[None] | None"]

_LISTS: dict[str, ListKind] = {
    "notifications/tools/list_changed": "tools",
    "notifications/resources/list_changed": "resources",
    "notifications/prompts/list_changed": "prompts",
}


class Notifications:
    """The client's `on_notification`: typed callbacks first, then the raw catch-all."""

    def __init__(
        self,
        *,
        on_log: LogHandler | None,
        on_list_changed: ListChangedHandler | None,
        on_resource_updated: ResourceUpdatedHandler | None,
        on_notification: NotificationHandler | None,
        list_changed: Callable[[ListKind], None],
    ) -> None:
        self.on_log = on_log
        self.on_list_changed = on_list_changed
        self.on_resource_updated = on_resource_updated
        self.on_notification = on_notification
        self._list_changed = list_changed  # the client's own bookkeeping (tool cache)

    def __call__(self, session: Session, event: NotificationReceived) -> Awaitable[None] | None:
        method, params = event.method, event.params
        pending: list[Awaitable[None]] = []
        kind = _LISTS.get(method)
        if kind is not None:
            self._list_changed(kind)
            if self.on_list_changed is not None:
                _call(pending, self.on_list_changed, kind)
        elif method == "notifications/message" and self.on_log is not None:
            typed = _log_params(params)
            if typed is not None:
                _call(pending, self.on_log, typed)
        elif method == "notifications/resources/updated" and self.on_resource_updated is not None:
            uri = (params or {}).get("uri")
            if isinstance(uri, str):
                _call(pending, self.on_resource_updated, uri)
            else:
                logger.debug("ignored resources/updated without a string uri: %r", params)
        if self.on_notification is not None:
            _call(pending, self.on_notification, method, params)
        if not pending:
            return None
        return _in_order(pending)


def _call(pending: list[Awaitable[None]], callback: Callable[..., Any], *args: Any) -> None:
    try:
        outcome = callback(*args)
    except Exception:
        logger.exception("notification callback %r failed", callback)
        return
    if outcome is not None and hasattr(outcome, "__await__"):
        pending.append(outcome)


async def _in_order(pending: list[Awaitable[None]]) -> None:
    for outcome in pending:
        try:
            await outcome
        except Exception:
            logger.exception("notification callback failed")


def _log_params(params: JSONObject | None) -> LoggingMessageNotificationParams | None:
    from mcpkit.types import LoggingMessageNotificationParams

    try:
        return LoggingMessageNotificationParams.from_wire(params or {})
    except Exception as exc:  # pydantic.ValidationError: a malformed log message
        logger.debug("ignored a malformed log message %r: %s", params, exc)
        return None
