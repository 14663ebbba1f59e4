"""The inspector logs in to a protected server through the client's OAuth (as `mcpkit list`
does): our authorization server approving at once, an mcpkit server verifying its JWTs."""

from __future__ import annotations

import pytest

from mcpkit.auth.client import Headless, MemoryTokenStore, OAuth
from tests.auth.client.test_real_server import real
from tests.inspector.running import inspector_page


@pytest.mark.parametrize("mode", ["legacy", "per-request"])
async def test_a_protected_server_is_logged_in_to(mode: str) -> None:
    store = MemoryTokenStore()
    async with (
        real() as (url, _auth, bearer),
        inspector_page(oauth=lambda: OAuth(approval=Headless(), store=store)) as page,
    ):
        await page.connect(url, mode)
        added = await page.result("tools/call", {"name": "add", "arguments": {"a": 20, "b": 22}})
        assert added["structuredContent"] == {"result": 42}
        assert store.load(url) is not None and bearer.refused == [401]


async def test_without_a_login_the_connection_is_refused_clearly() -> None:
    async with real() as (url, _auth, _bearer), inspector_page(oauth=False) as page:
        state = await page.post("/api/connect", {"target": url, "mode": "auto"})
        assert not state["connected"] and state["error"]
