"""Era detection over stdio decided by what a slow-starting server answers (issue 22, item 1).

A server that reads stdin only after several seconds (a `uvx` first run, a loaded machine)
finds the `server/discover` probe and the `initialize` sent after `probe_timeout` waiting in
its pipe. A dual-era server (ours, the official SDK's) answers the probe in the 2026-07-28
era and refuses the handshake (-32022): the client must take the probe's answer and connect
modern. A legacy-only server (one that refuses the probe, or never answers it) must still
connect through the handshake. Every server here is a real subprocess started late by
`slow_start.py`.
"""

from __future__ import annotations

import asyncio
import gc
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from mcpkit import Client
from mcpkit.client import era as era_module
from mcpkit.protocol import Outgoing
from mcpkit.transports.memory import memory_pair

HERE = Path(__file__).resolve().parent
FIXTURES = HERE.parent / "fixtures"
SLOW = str(HERE / "slow_start.py")
DELAY = "2"  # seconds before the server reads stdin: well past the probe_timeout below
PROBE = 0.5

SILENT_LEGACY = """
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if message.get("method") == "initialize":
        result = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                  "serverInfo": {"name": "silent-legacy", "version": "1"}}
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
    elif message.get("method") == "tools/list":
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {"tools": []}}),
              flush=True)
"""


@pytest.fixture(autouse=True)
def fresh_era_cache() -> Iterator[None]:
    era_module.ERAS.clear()
    yield
    era_module.ERAS.clear()


def late(script: Path | str, delay: str = DELAY) -> list[str]:
    return [sys.executable, SLOW, delay, str(script)]


@pytest.mark.parametrize("script", ["stdio_server.py", "official_server.py"])
async def test_a_slow_dual_era_server_connects_modern(script: str) -> None:
    async with Client(late(FIXTURES / script), probe_timeout=PROBE, timeout=30) as client:
        assert client.era == "per-request"
        assert client.protocol_version == "2026-07-28"
        result = await client.call_tool("add", {"a": 2, "b": 3})
        assert result.structured_content == {"result": 5}
    assert era_module.ERAS[era_module.server_key(late(FIXTURES / script))] == "2026-07-28"


async def test_the_official_server_starting_past_the_default_probe_wait_connects() -> None:
    # The case as reported: the default probe_timeout (3 s), a server that starts in 4 s.
    assert era_module.DEFAULT_PROBE_TIMEOUT < 4
    async with Client(late(FIXTURES / "official_server.py", "4"), timeout=30) as client:
        assert client.era == "per-request"
        assert (await client.call_tool("echo", {"text": "hi"})).structured_content == {
            "result": "hi"
        }


async def test_a_slow_legacy_server_that_refuses_the_probe_connects_legacy() -> None:
    # plain_stdio_server.py answers anything it does not know (server/discover) with -32601.
    async with Client(
        late(FIXTURES / "plain_stdio_server.py"), probe_timeout=PROBE, timeout=30
    ) as client:
        assert client.era == "handshake"
        assert client.protocol_version == "2025-06-18"
        assert [tool.name for tool in (await client.list_tools()).tools] == ["shout"]


async def test_a_slow_legacy_server_that_never_answers_the_probe_connects_legacy(
    tmp_path: Path,
) -> None:
    script = tmp_path / "silent_legacy.py"
    script.write_text(SILENT_LEGACY)
    async with Client(late(script), probe_timeout=PROBE, timeout=30) as client:
        assert client.era == "handshake"
        assert client.server_info["name"] == "silent-legacy"
        assert (await client.list_tools()).tools == []


# -- the order of the two answers, exactly (a scripted peer in process) ------------------------


class HeldProbe:
    """Holds server/discover back until initialize arrives, then answers both in the order
    given: a server whose answers to the queued probe and handshake come out of order."""

    def __init__(self, initialize_first: bool, initialize: Any) -> None:
        self.client_end, self._end = memory_pair()
        self.initialize_first = initialize_first
        self.initialize = initialize
        self.seen: list[str] = []
        self._task = asyncio.get_running_loop().create_task(self._serve())

    async def _serve(self) -> None:
        held: Any = None
        while (data := await self._end.read()) is not None:
            message = orjson.loads(data)
            self.seen.append(message.get("method", "?"))
            if message.get("method") == "server/discover":
                held = message
            elif message.get("method") == "initialize":
                probe = reply(held["id"], result=DISCOVERED)
                handshake = reply(message["id"], **self.initialize)
                pair = [handshake, probe] if self.initialize_first else [probe, handshake]
                self._end.write([Outgoing(orjson.dumps(m)) for m in pair])
            elif "id" in message:
                self._end.write([Outgoing(orjson.dumps(reply(message["id"], result={})))])


def reply(request_id: Any, **outcome: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, **outcome}


DISCOVERED = {
    "supportedVersions": ["2026-07-28"],
    "capabilities": {"tools": {}},
    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "held", "version": "1"}},
}
REFUSED = {"error": {"code": -32022, "message": "serving 2026-07-28", "data": {"supported": []}}}
ACCEPTED = {
    "result": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "serverInfo": {"name": "held", "version": "1"},
    }
}


@pytest.mark.parametrize("initialize_first", [True, False])
async def test_a_refused_initialize_and_the_probe_answer_in_either_order_mean_modern(
    initialize_first: bool,
) -> None:
    # The refusal first: the connection must still hear the probe's answer after it.
    peer = HeldProbe(initialize_first, REFUSED)
    async with Client(peer.client_end, mode="auto", probe_timeout=0.1, timeout=10) as client:
        assert client.era == "per-request"
        assert client.server_info["name"] == "held"
        await client.request("tools/list")  # the connection serves 2026-07-28 requests
    assert peer.seen[:2] == ["server/discover", "initialize"]


async def test_both_answers_in_together_the_probe_decides() -> None:
    # A dual-era server that accepts both: the era we prefer, since it speaks it.
    peer = HeldProbe(True, ACCEPTED)
    async with Client(peer.client_end, mode="auto", probe_timeout=0.1, timeout=10) as client:
        assert client.era == "per-request"


async def test_a_connect_cancelled_while_the_probe_waits_leaves_no_lost_error(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A connect given up on (a proxy's bounded upstream start cancels it) while the probe
    waits alone: the probe goes with it, its error retrieved (no "Task exception was never
    retrieved" from asyncio)."""
    silent = [sys.executable, str(FIXTURES / "silent.py"), str(tmp_path / "pid")]
    client = Client(silent, probe_timeout=30, timeout=None)
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(client.__aenter__(), 1.0)
    gc.collect()  # a lost task's error is logged when it is collected
    lost = [r.getMessage() for r in caplog.records if "never retrieved" in r.getMessage()]
    assert lost == []
