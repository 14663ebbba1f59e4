"""Our requests still waiting for an answer: their ids, progress tokens and deadlines.

Ids are integers from 1, never reused on a connection. A request that asked for progress uses
its own id as its progress token. Time is an argument, as everywhere in the core.
"""

from __future__ import annotations

from mcpkit.protocol.deadlines import Deadline, DeadlineQueue, Timeout
from mcpkit.protocol.jsonrpc import RequestId


class Outbound:
    """One request of ours in flight."""

    __slots__ = ("last_progress", "method", "progress_token", "related")

    def __init__(self, method: str, token: RequestId | None, related: RequestId | None) -> None:
        self.method = method
        self.progress_token = token
        self.related = related  # the peer's request we sent it while serving, if any
        self.last_progress: float | None = None


class OutboundRequests:
    """The table of our requests in flight (see the module docstring)."""

    __slots__ = ("_deadlines", "_entries", "_queue", "_tokens", "next_id")

    def __init__(self) -> None:
        self.next_id = 1
        self._entries: dict[RequestId, Outbound] = {}
        self._tokens: dict[RequestId, RequestId] = {}  # progress token -> request id
        self._deadlines: dict[RequestId, Deadline] = {}
        self._queue = DeadlineQueue()

    def __len__(self) -> int:
        return len(self._entries)

    def register(
        self,
        method: str,
        *,
        progress: bool,
        timeout: Timeout | None,
        now: float,
        related: RequestId | None = None,
    ) -> RequestId:
        """A new request's id (also its progress token when `progress`)."""
        request_id = self.next_id
        self.next_id += 1
        token = request_id if progress else None
        self._entries[request_id] = Outbound(method, token, related)
        if token is not None:
            self._tokens[token] = request_id
        if timeout is not None:
            deadline = Deadline(timeout, now)
            if deadline.at is not None:
                self._deadlines[request_id] = deadline
                self._queue.push(deadline.at, request_id)
        return request_id

    def get(self, request_id: RequestId) -> Outbound | None:
        return self._entries.get(request_id)

    def pop(self, request_id: RequestId) -> Outbound | None:
        entry = self._entries.pop(request_id, None)
        if entry is not None:
            self._deadlines.pop(request_id, None)
            if entry.progress_token is not None:
                self._tokens.pop(entry.progress_token, None)
        return entry

    def by_token(self, token: RequestId) -> tuple[RequestId, Outbound] | None:
        request_id = self._tokens.get(token)
        entry = None if request_id is None else self._entries.get(request_id)
        return None if entry is None or request_id is None else (request_id, entry)

    def progressed(self, request_id: RequestId, now: float) -> None:
        """Progress arrived: a deadline reset by progress moves out."""
        deadline = self._deadlines.get(request_id)
        if deadline is not None and deadline.on_progress(now) and deadline.at is not None:
            self._queue.push(deadline.at, request_id)

    def expired(self, now: float) -> list[tuple[RequestId, Outbound, float]]:
        """Requests whose deadline passed (id, entry, the limit that fired), still listed."""
        out = []
        for request_id in self._queue.pop_expired(now, self._deadlines):
            limit = self._deadlines[request_id].effective_timeout()
            out.append((request_id, self._entries[request_id], limit))
        return out

    def next_deadline(self) -> float | None:
        return self._queue.next_at(self._deadlines)

    def clear(self) -> list[tuple[RequestId, str]]:
        """Forget everything; the requests that were in flight (id, method)."""
        pending = [(request_id, entry.method) for request_id, entry in self._entries.items()]
        self._entries.clear()
        self._tokens.clear()
        self._deadlines.clear()
        return pending
