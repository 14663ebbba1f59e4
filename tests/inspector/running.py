"""The inspector under test: served on 127.0.0.1 by uvicorn in this process, talked to with
httpx like the page does (the token in a header, the event stream read as it comes)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
import orjson

from mcpkit.inspector import Inspector

JSONObject = dict[str, Any]
WAIT = 20.0  # seconds an expected event may take on a loaded machine


@dataclass
class Page:
    """What a page holds: the inspector's address, its token, an HTTP client, the events."""

    inspector: Inspector
    base: str
    token: str
    http: httpx.AsyncClient
    events: asyncio.Queue[JSONObject] = field(default_factory=asyncio.Queue)
    seen: list[JSONObject] = field(default_factory=list)

    async def post(self, path: str, body: JSONObject) -> JSONObject:
        answer = await self.http.post(path, json=body)
        assert answer.status_code == 200, answer.text
        result: JSONObject = answer.json()
        return result

    async def connect(self, target: str | list[str], mode: str = "auto") -> JSONObject:
        state = await self.post("/api/connect", {"target": target, "mode": mode})
        assert state["connected"], state["error"]
        return state

    async def request(self, method: str, params: JSONObject | None = None) -> JSONObject:
        return await self.post("/api/request", {"method": method, "params": params})

    async def result(self, method: str, params: JSONObject | None = None) -> JSONObject:
        answer = await self.request(method, params)
        assert "result" in answer, answer
        result: JSONObject = answer["result"]
        return result

    async def event(self, matches: Callable[[JSONObject], bool]) -> JSONObject:
        """The first event (from now on, or already seen and not yet taken) that matches."""
        for event in self.seen:
            if matches(event):
                self.seen.remove(event)
                return event
        async with asyncio.timeout(WAIT):
            while True:
                event = await self.events.get()
                if matches(event):
                    return event
                self.seen.append(event)


@contextlib.asynccontextmanager
async def inspector_page(**options: Any) -> AsyncIterator[Page]:
    inspector = Inspector(**options)
    async with inspector.serving() as url:
        base = url.split("/?", 1)[0]
        headers = {"authorization": f"Bearer {inspector.token}"}
        async with httpx.AsyncClient(base_url=base, headers=headers, timeout=60) as http:
            page = Page(inspector, base, inspector.token, http)
            reader = asyncio.create_task(_read_events(page))
            try:
                await page.event(lambda event: event["type"] == "state")  # the stream is open
                yield page
            finally:
                reader.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await reader


async def _read_events(page: Page) -> None:
    async with page.http.stream("GET", "/api/events") as stream:
        async for line in stream.aiter_lines():
            if line.startswith("data: "):
                page.events.put_nowait(orjson.loads(line[6:]))
