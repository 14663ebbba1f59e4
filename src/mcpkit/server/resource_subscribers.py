"""Handshake-era resource subscriptions: which sessions subscribed to which URIs.

`resources/subscribe` records the URI in the client's session state; `Subscribers` remembers
the sessions that did (weakly: a closed session leaves by itself) and tells exactly those when
a URI, or every URI a template matches, changed.
"""

from __future__ import annotations

import logging
import weakref
from typing import TYPE_CHECKING

from mcpkit.errors import INVALID_REQUEST, MCPError, ProtocolError
from mcpkit.protocol.snapshot import Subscribed
from mcpkit.runtime import Session
from mcpkit.server.uri_template import UriTemplate

if TYPE_CHECKING:
    from mcpkit.server.context import Context

logger = logging.getLogger("mcpkit.server")


class Subscribers:
    """The sessions that subscribed to resources (see the module docstring)."""

    def __init__(self) -> None:
        self._sessions: weakref.WeakSet[Session] = weakref.WeakSet()

    def add(self, session: Session, uri: str) -> None:
        session.state.apply(Subscribed(uri))
        self._sessions.add(session)

    def notify(self, uri: str, template: UriTemplate | None) -> int:
        """notifications/resources/updated to the sessions subscribed to `uri` (or to what
        `template` matches); the number sent."""
        sent = 0
        for session in list(self._sessions):
            subscriptions: set[str] = session.state.subscriptions
            if session.closed or not subscriptions:
                self._sessions.discard(session)
                continue
            if template is None:
                matched = [uri] if uri in subscriptions else []
            else:
                matched = sorted(s for s in subscriptions if template.match(s) is not None)
            for each in matched:
                try:
                    session.notify("notifications/resources/updated", {"uri": each})
                except MCPError as exc:  # closing under us, or the capability is gone
                    logger.debug("could not notify %s updated: %s", each, exc)
                    break
                sent += 1
        return sent


def session_of(ctx: Context, method: str) -> Session:
    """The session a subscription lives in. Raises ProtocolError (-32600) for a request that
    belongs to none (a stateless endpoint): nothing would remember the subscription."""
    peer = ctx.peer
    if not isinstance(peer, Session):
        raise ProtocolError(
            INVALID_REQUEST,
            f"Invalid Request: {method} needs a session; this endpoint is stateless",
        )
    return peer
