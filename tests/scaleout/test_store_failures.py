"""The Redis session and event stores at their boundary with redis-py, against a real
redis-server: a failed Redis leaves them as StateUnavailable (naming the store and the kind
of failure, never the URL's password), and `check` keeps busy sessions alive."""

from __future__ import annotations

import pytest
import redis.asyncio

from mcpkit.stores.redis_client import StateUnavailable, connect
from mcpkit.stores.redis_events import RedisEventStore
from mcpkit.stores.redis_sessions import RedisSessionStore
from mcpkit.stores.tasks import StoreUnavailable
from tests.http.servers import unused_port


async def test_check_refreshes_the_busy_sessions_and_gives_the_gen_of_those_that_exist(
    redis_url: str,
) -> None:
    client = redis.asyncio.Redis.from_url(redis_url)
    store = RedisSessionStore(client, prefix="alive-test:", ttl=60, max_sessions=None)
    try:
        for session_id in ("busy", "idle"):
            assert await store.reserve(session_id, "")
            await client.pexpire(store.key(session_id), 5_000)
        await store.update("idle", {"level": "info"}, ())
        gens = await store.check(["busy", "idle", "gone"], ["busy"])
        assert gens == {"busy": 0, "idle": 1}
        assert await client.pttl(store.key("busy")) > 5_000  # refreshed to the 60 s ttl
        assert await client.pttl(store.key("idle")) <= 5_000  # only checked
    finally:
        await client.aclose()


async def test_a_redis_nobody_listens_on_is_state_unavailable_without_the_password() -> None:
    client = connect(f"redis://:hunter2-secret@127.0.0.1:{unused_port()}/0", timeout=1.0)
    sessions = RedisSessionStore(client, prefix="down:")
    events = RedisEventStore(client, prefix="down:")
    try:
        for attempt in (
            sessions.reserve("s", ""),
            sessions.touch("s"),
            sessions.load("s", ""),
            sessions.update("s", {"level": "info"}, ()),
            sessions.delete("s"),
            sessions.check(["s"], ["s"]),
            events.replay_after("s", "1.1"),
        ):
            with pytest.raises(StateUnavailable) as failed:
                await attempt
            assert isinstance(failed.value, StoreUnavailable)
            assert "is unavailable (Redis: ConnectionError)" in str(failed.value)
            assert "hunter2" not in str(failed.value) and failed.value.__cause__ is None
    finally:
        await client.aclose()


def test_connect_refuses_a_timeout_that_is_not_positive() -> None:
    for timeout in (0.0, -1.0, float("nan")):
        with pytest.raises(ValueError, match="timeout must be a positive"):
            connect("redis://127.0.0.1:6379/0", timeout=timeout)
