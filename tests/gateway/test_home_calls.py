"""Home calls (gateway/home.py) between two workers in one process, on the bus's in-process
twin (`MemoryBus` on one `MemoryHub`): the answer, a JSON-RPC error as raised at home, an
unknown operation, a cancel that reaches home, and silence when home is gone."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from mcpkit.errors import INTERNAL_ERROR, INVALID_PARAMS, ProtocolError
from mcpkit.gateway.home import HomeCalls, HomeSilent
from mcpkit.stores.bus import MemoryBus, MemoryHub

JSONObject = dict[str, object]


@pytest.fixture
async def workers() -> AsyncIterator[tuple[HomeCalls, HomeCalls]]:
    hub = MemoryHub()
    buses = [MemoryBus(hub), MemoryBus(hub)]
    for bus in buses:
        await bus.start()
    yield HomeCalls(buses[0], silence=0.5, beat=0.1), HomeCalls(buses[1], silence=0.5, beat=0.1)
    for bus in buses:
        await bus.stop()


async def test_a_call_runs_at_home_and_its_answer_or_error_comes_back(
    workers: tuple[HomeCalls, HomeCalls],
) -> None:
    caller, home = workers

    async def double(payload: JSONObject) -> JSONObject:
        await asyncio.sleep(0.25)  # longer than a beat: heartbeats keep the caller waiting
        return {"n": 2 * int(str(payload["n"]))}

    async def refuse(payload: JSONObject) -> JSONObject:
        raise ProtocolError(INVALID_PARAMS, "no", {"why": payload})

    home.ops.update(double=double, refuse=refuse)
    assert await caller.call(home.worker, "double", {"n": 21}) == {"n": 42}
    with pytest.raises(ProtocolError) as refused:
        await caller.call(home.worker, "refuse", {"x": 1})
    assert (refused.value.code, refused.value.data) == (INVALID_PARAMS, {"why": {"x": 1}})
    with pytest.raises(ProtocolError, match="unknown home call 'missing'") as unknown:
        await caller.call(home.worker, "missing", {})
    assert unknown.value.code == INTERNAL_ERROR


async def test_a_cancelled_call_is_cancelled_at_home(
    workers: tuple[HomeCalls, HomeCalls],
) -> None:
    caller, home = workers
    started, cancelled = asyncio.Event(), asyncio.Event()

    async def forever(payload: JSONObject) -> JSONObject:
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            cancelled.set()
        return {}

    home.ops["forever"] = forever
    call = asyncio.ensure_future(caller.call(home.worker, "forever", {}))
    await asyncio.wait_for(started.wait(), 5)
    call.cancel()
    await asyncio.wait_for(cancelled.wait(), 5)
    assert call.cancelled()


async def test_a_caller_gives_up_when_home_is_silent(
    workers: tuple[HomeCalls, HomeCalls],
) -> None:
    caller, home = workers
    await home.bus.stop()  # home is gone: nothing hears the call
    with pytest.raises(HomeSilent):
        await caller.call(home.worker, "double", {"n": 1})
