"""Lines from the peer that are not JSON at all: the classic stray `print()` in a stdio server,
which shares stdout with the protocol.

Each such line is rejected by the core (and answered with -32700 where owed); nothing else in
flight is disturbed. This module makes it visible: a WARNING naming the peer with the start
of the line (the first three, then every hundredth, so a chatty server cannot flood the log),
and a hint that a request which then times out can carry in its error.
"""

from __future__ import annotations

import logging

logger = logging.getLogger("mcpkit")

LOGGED_FIRST = 3
LOGGED_EVERY = 100


class Noise:
    """Counts the non-JSON lines a peer sent; `who` names the peer in messages."""

    def __init__(self, who: str) -> None:
        self.who = who
        self.count = 0
        self.last: str | None = None

    def seen(self, text: str) -> None:
        self.count += 1
        self.last = text
        if self.count <= LOGGED_FIRST or self.count % LOGGED_EVERY == 0:
            logger.warning(
                "%s sent a line that is not JSON-RPC (%d so far; stdout is for MCP messages "
                "only): %r",
                self.who,
                self.count,
                text,
            )

    def hint(self) -> str | None:
        """A sentence for a timeout's error, when this peer sent non-JSON lines."""
        if not self.count:
            return None
        lines = "a line" if self.count == 1 else f"{self.count} lines"
        return (
            f"{self.who} sent {lines} that {'is' if self.count == 1 else 'are'} not JSON-RPC "
            f"(the last: {self.last!r}): a print() to stdout in the server?"
        )
