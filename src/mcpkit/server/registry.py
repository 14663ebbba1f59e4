"""What tools, prompts and resources registries share: named items, a version, change hooks,
and the scopes an item needs (with authorization: a caller without them may not use it, and,
with `hide_out_of_scope`, does not see it listed).

Registering goes through the `Server` (`add_tool`, `add_prompt`, `add_resource`, their
decorators, and the `remove_*` methods): the registries are its internals, and their old
public ways to add and remove (`put`, `remove`, `add`, `decorator`, ...) warn for one release.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Generic, Protocol, TypeVar

from mcpkit.runtime.principal import Principal

JSONObject = dict[str, Any]


class Listed(Protocol):
    @property
    def definition(self) -> JSONObject: ...

    @property
    def scopes(self) -> frozenset[str]: ...


def scope_set(scopes: Iterable[str] | None) -> frozenset[str]:
    """The scopes an item needs, from what a decorator was given. Raises ValueError for a
    scope that is not a non-empty string without spaces (RFC 6749 scope tokens)."""
    found = frozenset(scopes or ())
    for scope in found:
        if not isinstance(scope, str) or not scope or " " in scope:
            raise ValueError(f"a scope is a non-empty string without spaces, not {scope!r}")
    return found


def deprecated(old: str, new: str) -> None:
    """Warn that `old` (a spelling kept for one release) is replaced by `new`, pointing at the
    caller of the deprecated method."""
    warnings.warn(f"{old} is deprecated; use {new}", DeprecationWarning, stacklevel=3)


T = TypeVar("T", bound=Listed)


class Registry(Generic[T]):
    """Items by name in registration order (the order lists keep, page after page).

    Every change bumps `version` (which invalidates cached list pages) and calls `on_change`,
    which the server turns into a list_changed notification for connected clients.
    """

    def __init__(self, kind: str, on_change: Callable[[str], None] | None = None) -> None:
        self.kind = kind
        self.version = 0
        self._items: dict[str, T] = {}
        self._definitions: list[JSONObject] | None = None
        self._on_change = on_change
        self.hide_out_of_scope = False  # lists show a principal only what it may use
        self.scoped = False  # some item needs scopes

    def put(self, name: str, item: T, *, replace: bool = False) -> T:
        """Deprecated: register through the server (`server.add_tool(tool)`, ...)."""
        deprecated(f"server.{self.kind}s.put()", f"server.add_{self.kind}()")
        return self._put(name, item, replace=replace)

    def remove(self, name: str) -> T:
        """Deprecated: `server.remove_tool(name)` (`remove_prompt`, `remove_resource`)."""
        deprecated(f"server.{self.kind}s.remove()", f"server.remove_{self.kind}()")
        return self._remove(name)

    def _put(self, name: str, item: T, *, replace: bool = False) -> T:
        """Add `item`. Raises ValueError if the name is taken and `replace` is false."""
        if name in self._items and not replace:
            raise ValueError(f"a {self.kind} named {name!r} is already registered")
        self._items[name] = item
        self.scoped = self.scoped or bool(item.scopes)
        self._changed()
        return item

    def apply(self, removed: Iterable[str], added: dict[str, T]) -> None:
        """Remove and add several items, one change (a mount mirroring another server's).
        Raises KeyError for an unknown name removed."""
        for name in removed:
            del self._items[name]
        self._items.update(added)
        self.scoped = self.scoped or any(item.scopes for item in added.values())
        self._changed()

    def _remove(self, name: str) -> T:
        """Remove and return an item. Raises KeyError for an unknown name."""
        try:
            item = self._items.pop(name)
        except KeyError:
            raise KeyError(f"no {self.kind} named {name!r}") from None
        self._changed()
        return item

    def get(self, name: str) -> T | None:
        return self._items.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[T]:
        return iter(self._items.values())

    def __len__(self) -> int:
        return len(self._items)

    def ordered(self) -> list[T]:
        """The items in the order lists show them."""
        return list(self._items.values())

    def definitions(self) -> list[JSONObject]:
        """The wire definitions of every item (in `ordered` order), built once per version."""
        if self._definitions is None:
            self._definitions = [item.definition for item in self.ordered()]
        return self._definitions

    def view_for(
        self, principal: Principal | None, items: list[JSONObject] | None = None
    ) -> tuple[str, list[JSONObject]]:
        """What `principal` is shown of `items` (the definitions by default, or a parallel
        list): everything ("" names that view) unless `hide_out_of_scope` and it lacks the
        scopes of some; then the items it may use, under a view named by its scopes."""
        shown = self.definitions() if items is None else items
        if principal is None or not self.hide_out_of_scope or not self.scoped:
            return "", shown
        granted = principal.scopes
        allowed = [
            entry
            for item, entry in zip(self.ordered(), shown, strict=True)
            if item.scopes <= granted
        ]
        return "|" + " ".join(sorted(granted)), allowed

    def _changed(self) -> None:
        self.version += 1
        self._definitions = None
        if self._on_change is not None:
            self._on_change(self.kind)
