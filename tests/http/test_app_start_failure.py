"""A server whose lifespan fails when the HTTP app starts: the ASGI server is told
(lifespan.startup.failed, with the reason) and nothing else is logged (before: asyncio's
"Task exception was never retrieved" and a second traceback, seen running `mcpkit proxy`
in front of a server that could not start)."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest

from mcpkit import Server


async def test_a_lifespan_that_fails_to_start_is_reported_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    @contextlib.asynccontextmanager
    async def broken(server: Server) -> AsyncIterator[None]:
        raise RuntimeError("no database")
        yield

    app: Any = Server("s", lifespan=broken).http_app()
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "lifespan.startup"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    with caplog.at_level(logging.ERROR):
        await app({"type": "lifespan"}, receive, send)
        del app
        await asyncio.sleep(0)
        gc.collect()
        await asyncio.sleep(0)
    assert [m["type"] for m in sent] == ["lifespan.startup.failed"]
    assert "no database" in sent[0]["message"]
    assert "never retrieved" not in caplog.text
