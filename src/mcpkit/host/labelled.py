"""One rule for the host's callbacks: each is told which server it is about.

What a server asks or tells the host reaches the application's callback with the server's name
first: `(server, params)` for `sampling`, `elicitation` and `on_log`, `(server, kind)` for
`on_list_changed`, `(server, uri)` for `on_resource_updated`, `(server, method, params)` for
`on_notification`. The rule holds wherever the callback is given: `HostServers(sampling=...,
elicitation=...)` or among its `client_options` (a `Sampling` / `Elicitation` there keeps the
modes it declares). A callback that cannot take those arguments is refused when the host is
built (TypeError), not when a server first asks, mid-call.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable, Mapping
from typing import Any

from mcpkit.client import Elicitation, Sampling

# option -> what the Client passes its callback; the host passes the server's name before it
ARGUMENTS = {
    "sampling": ("params",),
    "elicitation": ("params",),
    "on_log": ("params",),
    "on_list_changed": ("kind",),
    "on_resource_updated": ("uri",),
    "on_notification": ("method", "params"),
}
# (server name, the request's params as sent) -> the answer, as the Client's handlers return it
LabelledHandler = Callable[[str, Any], Any]


def check(option: str, callback: object, arguments: tuple[str, ...] | None = None) -> None:
    """Raise TypeError unless `callback` can be called as (server, *arguments) for `option`."""
    arguments = ARGUMENTS[option] if arguments is None else arguments
    wanted = ", ".join(("server", *arguments))
    if not callable(callback):
        raise TypeError(f"{option} must be a callable taking ({wanted}), not {callback!r}")
    try:
        signature = inspect.signature(callback)
    except (TypeError, ValueError):  # no signature to read (a builtin): trust it
        return
    try:
        signature.bind("server", *arguments)
    except TypeError:
        name = getattr(callback, "__qualname__", None) or type(callback).__name__
        takes = ", ".join(signature.parameters)
        raise TypeError(
            f"{option} {name}({takes}) must take ({wanted}): the host tells each callback "
            "which server it is about"
        ) from None


def collect(
    options: dict[str, Any], sampling: object, elicitation: object
) -> dict[str, Sampling | Elicitation | LabelledHandler]:
    """Take the server callbacks out of `options` (Client keywords), checked: the `sampling` /
    `elicitation` handlers as the Client's `Sampling` / `Elicitation` (offering every mode
    unless one given says which), and the `on_*` callbacks. Raises TypeError for a wrong
    callback or a handler given both ways."""
    found: dict[str, Any] = {}
    for option, keyword in (("sampling", sampling), ("elicitation", elicitation)):
        given = options.pop(option, None)
        if given is not None and keyword is not None:
            raise TypeError(f"{option} is given twice (as {option}= and in client_options)")
        handler = given if keyword is None else keyword
        if handler is not None:
            found[option] = _modes(option, handler)
    for option in ARGUMENTS:
        if option not in found and options.get(option) is not None:
            found[option] = options.pop(option)
            check(option, found[option])
    return found


def for_server(callback: Any, server: str) -> Any:
    """`callback` as the Client calls it, with `server` given first."""
    if isinstance(callback, Sampling | Elicitation):
        handler: Any = callback.handler  # a labelled one: (server, params)
        return dataclasses.replace(callback, handler=functools.partial(handler, server))
    return functools.partial(callback, server)


def _modes(option: str, handler: Any) -> Sampling | Elicitation:
    if isinstance(handler, Sampling | Elicitation):
        check(option, handler.handler)
        return handler
    check(option, handler)
    if option == "sampling":
        return Sampling(handler, tools=True, context=True)
    return Elicitation(handler, form=True, url=True)


def refused(options: Mapping[str, Any] | None, reasons: Mapping[str, str]) -> None:
    """Raise TypeError when `options` hold one of `reasons`' keys (saying where it goes)."""
    for option, reason in reasons.items():
        if (options or {}).get(option) is not None:
            raise TypeError(f"{option} in client_options: {reason}")
