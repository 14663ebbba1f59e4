"""Where a Redis failure becomes `StoreUnavailable`, logged once per outage.

`with outage:` around a store's round trips: what redis-py raises when Redis fails (refused,
reset, timed out, ...: `redis_client.is_failure`) leaves as `StoreUnavailable` naming the store
and the kind of failure, never redis-py's text (it may quote the URL, and a URL may hold a
password). The first failure of an outage is logged (one warning); the first success after
it is too (info), so a Redis away for an hour is two log lines, not one per period.
"""

from __future__ import annotations

import logging
from types import TracebackType

from mcpkit.stores.redis_client import Unavailable
from mcpkit.stores.tasks import StoreUnavailable

logger = logging.getLogger("mcpkit.stores")


class Outage(Unavailable):
    """`with Outage("the lease store"):` -- see the module docstring. One per store object:
    it remembers whether that store's Redis is down. The mapping is `Unavailable`'s; this
    adds the two log lines of an outage."""

    __slots__ = ("down",)

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.down = False

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if error is None:
            if self.down:
                self.down = False
                logger.info("%s is available again", self.what)
            return
        try:
            super().__exit__(kind, error, traceback)
        except StoreUnavailable as unavailable:
            if not self.down:
                self.down = True
                logger.warning("%s", unavailable)
            raise
