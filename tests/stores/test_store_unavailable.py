"""A Redis failure leaves the task store as mcpkit's StoreUnavailable (issue 23: third-party
exceptions mapped at the boundary), naming the kind of failure and never the URL's password."""

from __future__ import annotations

import socket

import pytest

from mcpkit.errors import MCPError
from mcpkit.stores import StoreUnavailable
from mcpkit.stores.redis_tasks import RedisTaskStore
from tests.peers import redis_server


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


async def test_an_unreachable_redis_is_store_unavailable_without_the_password() -> None:
    store = RedisTaskStore(f"redis://:hunter2@127.0.0.1:{_closed_port()}/0")
    try:
        with pytest.raises(StoreUnavailable, match="ConnectionError") as caught:
            await store.get("t1")
        assert isinstance(caught.value, MCPError)
        assert "hunter2" not in str(caught.value)
        with pytest.raises(StoreUnavailable):
            await store.list(None, None, 10)
    finally:
        await store.aclose()


async def test_a_redis_that_goes_away_is_store_unavailable() -> None:
    with redis_server() as url:
        store = RedisTaskStore(url)
        assert await store.get("t1") is None  # connected, and nothing there
    try:
        with pytest.raises(StoreUnavailable):
            await store.get("t1")
    finally:
        await store.aclose()
