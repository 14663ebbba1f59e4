"""What tools, prompts and resources registries share: named items, a version, change hooks."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Generic, Protocol, TypeVar

JSONObject = dict[str, Any]


class Listed(Protocol):
    @property
    def definition(self) -> JSONObject: ...


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

    def put(self, name: str, item: T, *, replace: bool = False) -> T:
        """Add `item`. Raises ValueError if the name is taken and `replace` is false."""
        if name in self._items and not replace:
            raise ValueError(f"a {self.kind} named {name!r} is already registered")
        self._items[name] = item
        self._changed()
        return item

    def remove(self, name: str) -> T:
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

    def definitions(self) -> list[JSONObject]:
        """The wire definitions of every item, built once per version."""
        if self._definitions is None:
            self._definitions = [item.definition for item in self._items.values()]
        return self._definitions

    def _changed(self) -> None:
        self.version += 1
        self._definitions = None
        if self._on_change is not None:
            self._on_change(self.kind)
