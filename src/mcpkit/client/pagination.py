"""Following `nextCursor` to the end of a list, with a limit against servers that never stop.

A list ends at the first page without a `nextCursor` (an empty string counts as none). It is
abandoned with `PaginationError` when the server hands back a cursor it already gave (a loop)
or when `max_pages` pages went by and another cursor still came.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Protocol, TypeVar

from mcpkit.errors import PaginationError

DEFAULT_MAX_PAGES = 1000


class Page(Protocol):
    @property
    def next_cursor(self) -> str | None: ...


P = TypeVar("P", bound=Page)


async def pages(
    fetch: Callable[[str | None], Awaitable[P]], method: str, max_pages: int
) -> AsyncIterator[P]:
    """Yield each page `fetch(cursor)` returns, from the first to the last.

    Raises PaginationError (a repeated cursor, or more than `max_pages` pages), and whatever
    `fetch` raises.
    """
    if max_pages < 1:
        raise ValueError("max_pages must be at least 1")
    cursor: str | None = None
    seen: set[str] = set()
    for number in range(1, max_pages + 1):
        page = await fetch(cursor)
        yield page
        cursor = page.next_cursor
        if not cursor:
            return
        if cursor in seen:
            raise PaginationError(
                method, number, f"the server returned the cursor {cursor!r} a second time"
            )
        seen.add(cursor)
    raise PaginationError(
        method,
        max_pages,
        f"the server is still returning cursors after {max_pages} pages "
        "(pass max_pages= to allow more)",
    )


async def items(
    fetch: Callable[[str | None], Awaitable[Any]], method: str, key: str, max_pages: int
) -> AsyncIterator[Any]:
    """Yield the entries under `key` ("tools", "resources", ...) of every page."""
    async for page in pages(fetch, method, max_pages):
        for item in getattr(page, key):
            yield item
