"""Server-to-client requests put to the person at the page: sampling, elicitation (form and
URL) and roots become "ask" events, and the client's handlers await the answer the page posts
to /api/answer.

A pending ask ends without an answer when its request is cancelled (the server's
`notifications/cancelled` cancels the handler's task) or the connection closes (`cancel_all`):
the page gets {"type": "ask-cancelled", "id": ...} and a late answer is refused (KeyError).
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from typing import Any

from mcpkit.errors import ProtocolError

JSONObject = dict[str, Any]


class Asks:
    """The asks waiting for the person, by id."""

    def __init__(self, publish: Callable[[JSONObject], None]) -> None:
        self._publish = publish
        self._pending: dict[int, tuple[JSONObject, asyncio.Future[JSONObject]]] = {}
        self._ids = itertools.count(1)

    def pending(self) -> list[JSONObject]:
        """The asks not answered yet, as their events (a page opened late shows them)."""
        return [event for event, _ in self._pending.values()]

    async def ask(self, method: str, params: JSONObject) -> JSONObject:
        """Put a request to the person; its result. Raises ProtocolError for an error answer."""
        ask_id = next(self._ids)
        future: asyncio.Future[JSONObject] = asyncio.get_running_loop().create_future()
        event = {"type": "ask", "id": ask_id, "method": method, "params": params}
        self._pending[ask_id] = (event, future)
        self._publish(event)
        try:
            answer = await future
        finally:
            if self._pending.pop(ask_id, None) is not None:
                self._publish({"type": "ask-cancelled", "id": ask_id})
        if "error" in answer:
            error = answer["error"]
            raise ProtocolError(int(error.get("code", -1)), str(error.get("message", "")))
        result: JSONObject = answer["result"]
        return result

    def answer(self, ask_id: int, answer: JSONObject) -> None:
        """The person's answer: {"result": {...}} or {"error": {"code", "message"}}.
        Raises KeyError for an ask that is not pending, ValueError for a malformed answer."""
        entry = self._pending.pop(ask_id, None)
        if entry is None:
            raise KeyError(ask_id)
        if not _well_formed(answer):
            self._pending[ask_id] = entry
            raise ValueError('an answer is {"result": {...}} or {"error": {"code", "message"}}')
        entry[1].set_result(answer)

    def cancel_all(self) -> None:
        """The connection closed: every pending ask ends unanswered."""
        for _, future in list(self._pending.values()):
            if not future.done():
                future.set_exception(ProtocolError(-1, "the inspector's connection closed"))

    # -- the client's handlers -----------------------------------------------------------

    async def sampling(self, params: Any) -> JSONObject:
        return await self.ask("sampling/createMessage", _wire(params))

    async def elicitation(self, params: Any) -> JSONObject:
        return await self.ask("elicitation/create", _wire(params))

    async def roots(self) -> list[JSONObject]:
        result = await self.ask("roots/list", {})
        roots = result.get("roots")
        if not isinstance(roots, list):
            raise ProtocolError(-32603, 'the answer to roots/list needs "roots": [...]')
        return roots


def _wire(params: Any) -> JSONObject:
    to_wire = getattr(params, "to_wire", None)
    wire: JSONObject = to_wire() if to_wire is not None else dict(params)
    return wire


def _well_formed(answer: JSONObject) -> bool:
    if isinstance(answer.get("result"), dict):
        return True
    error = answer.get("error")
    return isinstance(error, dict) and isinstance(error.get("message", ""), str)
