"""Era selection (2026-07-28 "modern" vs the initialize handshake): the server/discover probe,
its three outcomes, pinned modes, the probe timeout, the per-server era cache, and the
envelope every modern request carries. Against our own server in process, raw fakes that
answer exactly what a test needs, and a silent legacy server over stdio.
"""

from __future__ import annotations

import asyncio
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from mcpkit import Client, Server
from mcpkit.client import era as era_module
from mcpkit.client.era import EraMismatch
from mcpkit.errors import LocalProtocolViolation, ProtocolError
from mcpkit.protocol import Outgoing
from mcpkit.transports.memory import memory_pair

JSONObject = dict[str, Any]
VERSION = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"
# Every modern request declares the tasks extension (call_tool follows a task).
TASKS = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
INFO = "io.modelcontextprotocol/clientInfo"
LEVEL = "io.modelcontextprotocol/logLevel"

DISCOVERED: JSONObject = {
    "resultType": "complete",
    "supportedVersions": ["2026-07-28", "2025-11-25"],
    "capabilities": {"tools": {}},
    "instructions": "raw",
    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "raw", "version": "9"}},
}
INITIALIZED: JSONObject = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "raw-legacy", "version": "1"},
}


@pytest.fixture(autouse=True)
def fresh_era_cache() -> Iterator[None]:
    era_module.ERAS.clear()
    yield
    era_module.ERAS.clear()


class RawServer:
    """An in-memory peer answering each request with `answer(message)`: a result dict, an
    ("error", code, message, data) tuple, or None (stay silent). Records what arrives."""

    def __init__(self, answer: Callable[[JSONObject], Any]) -> None:
        self.answer = answer
        self.seen: list[JSONObject] = []
        self._arrived = asyncio.Event()
        self.client_end, self._end = memory_pair()
        self._task = asyncio.get_running_loop().create_task(self._serve())

    async def _serve(self) -> None:
        while (data := await self._end.read()) is not None:
            message = orjson.loads(data)
            self.seen.append(message)
            self._arrived.set()
            if "id" not in message or "method" not in message:
                continue
            outcome = self.answer(message)
            if outcome is None:
                continue
            reply: JSONObject = {"jsonrpc": "2.0", "id": message["id"]}
            if isinstance(outcome, tuple):
                _, code, text, data_ = outcome
                reply["error"] = {"code": code, "message": text, "data": data_}
            else:
                reply["result"] = outcome
            self._end.write([Outgoing(orjson.dumps(reply))])

    def methods(self) -> list[str]:
        return [m["method"] for m in self.seen if "method" in m]

    async def received(self, method: str) -> None:
        """Wait (at most 5 s) until a message with `method` has arrived."""
        async with asyncio.timeout(5):
            while method not in self.methods():
                self._arrived.clear()
                await self._arrived.wait()


def legacy_answers(discover: Any) -> Callable[[JSONObject], Any]:
    def answer(message: JSONObject) -> Any:
        method = message["method"]
        if method == "server/discover":
            return discover
        if method == "initialize":
            return INITIALIZED
        return {"tools": []} if method == "tools/list" else {}

    return answer


def demo() -> Server:
    server = Server("demo", version="1.2.3", instructions="Be nice.")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    return server


# -- our own server, in process -----------------------------------------------------------


async def test_auto_finds_our_server_modern_and_calls_it() -> None:
    async with Client(demo(), mode="auto") as client:
        assert client.era == "per-request"
        assert client.protocol_version == "2026-07-28"
        assert client.server_info["name"] == "demo"
        assert client.instructions == "Be nice."
        assert client.supports("tools")
        assert client.discovered is not None
        assert "2026-07-28" in client.discovered["supportedVersions"]
        result = await client.call_tool("add", {"a": 2, "b": 3})
        assert result.structured_content == {"result": 5}
        await client.ping()  # server/discover stands in for ping


async def test_in_process_targets_keep_the_handshake_unless_asked() -> None:
    async with Client(demo()) as client:
        assert client.era == "handshake"
        assert client.protocol_version == "2025-11-25"
        assert client.discovered is None
    async with Client(demo(), mode="handshake") as client:
        assert client.era == "handshake"
    async with Client(demo(), protocol_version="2026-07-28") as client:
        assert client.era == "per-request"
    async with Client(demo(), mode="2026-07-28") as client:
        assert client.era == "per-request"


def test_unknown_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown client mode"):
        Client(demo(), mode="2030-01-01")


# -- the probe's outcomes -------------------------------------------------------------------


async def test_every_modern_request_carries_the_envelope_and_no_initialize_is_sent() -> None:
    raw = RawServer(legacy_answers(DISCOVERED))

    async def sample(params: Any) -> JSONObject:
        return {}

    async with Client(
        raw.client_end, mode="auto", sampling=sample, name="probe", version="0.1"
    ) as client:
        assert client.era == "per-request"
        assert client.server_info == {"name": "raw", "version": "9"}
        assert client.instructions == "raw"
        await client.list_tools()
        await client.request("tools/call", {"name": "x", "arguments": {}})
        await client.ping()
    assert "initialize" not in raw.methods()
    requests = [m for m in raw.seen if "id" in m]
    assert [m["method"] for m in requests] == [
        "server/discover",
        "tools/list",
        "tools/call",
        "server/discover",
    ]
    for message in requests:
        meta = message["params"]["_meta"]
        assert meta[VERSION] == "2026-07-28"
        assert meta[CAPS] == {"sampling": {}, **TASKS}
        assert meta[INFO] == {"name": "probe", "version": "0.1"}


async def test_roots_are_declared_without_list_changed_in_the_modern_era_only() -> None:
    # 2026-07-28 has no client notifications: its RootsCapability has no listChanged.
    modern = RawServer(legacy_answers(DISCOVERED))
    async with Client(modern.client_end, mode="auto", roots=["file:///tmp"]) as client:
        await client.list_tools()
    for message in [m for m in modern.seen if "id" in m]:
        assert message["params"]["_meta"][CAPS] == {"roots": {}, **TASKS}

    legacy = RawServer(legacy_answers(("error", -32601, "Method not found", None)))
    async with Client(legacy.client_end, mode="auto", roots=["file:///tmp"]) as client:
        assert client.era == "handshake"
    probe, initialize = [m for m in legacy.seen if "id" in m][:2]
    assert probe["params"]["_meta"][CAPS] == {"roots": {}, **TASKS}
    # the extension is 2026-07-28's: never in an initialize
    assert initialize["params"]["capabilities"] == {"roots": {"listChanged": True}}


@pytest.mark.parametrize("code", [-32601, -32602, -32600, -32000, -32603, 1234])
async def test_any_other_error_means_a_legacy_server(code: int) -> None:
    raw = RawServer(legacy_answers(("error", code, "no such thing before initialize", None)))
    async with Client(raw.client_end, mode="auto") as client:
        assert client.era == "handshake"
        assert client.protocol_version == "2025-11-25"
        assert client.server_info["name"] == "raw-legacy"
        await client.list_tools()
    assert raw.methods()[:3] == ["server/discover", "initialize", "notifications/initialized"]
    later = [m for m in raw.seen if m.get("method") == "tools/list"]
    assert "_meta" not in later[0].get("params", {})  # no envelope in the handshake era


async def test_a_result_that_is_no_discover_result_means_legacy() -> None:
    raw = RawServer(legacy_answers({"content": []}))  # a lax server answering anything
    async with Client(raw.client_end, mode="auto") as client:
        assert client.era == "handshake"


async def test_unsupported_version_with_only_handshake_versions_in_common_initializes() -> None:
    refusal = ("error", -32022, "Unsupported protocol version", {"supported": ["2025-11-25"]})
    raw = RawServer(legacy_answers(refusal))
    async with Client(raw.client_end, mode="auto") as client:
        assert client.era == "handshake"
    assert raw.methods()[:2] == ["server/discover", "initialize"]


async def test_unsupported_version_with_nothing_in_common_is_a_clear_error() -> None:
    refusal = ("error", -32022, "Unsupported protocol version", {"supported": ["2099-01-01"]})
    raw = RawServer(legacy_answers(refusal))
    with pytest.raises(EraMismatch, match="2099-01-01"):
        async with Client(raw.client_end, mode="auto"):
            pass
    assert "initialize" not in raw.methods()


async def test_a_modern_only_client_refuses_a_legacy_server_clearly() -> None:
    raw = RawServer(legacy_answers(("error", -32601, "Method not found", None)))
    with pytest.raises(EraMismatch, match="pinned to protocol 2026-07-28"):
        async with Client(raw.client_end, mode="2026-07-28"):
            pass
    assert "initialize" not in raw.methods()


async def test_pinned_legacy_never_probes() -> None:
    raw = RawServer(legacy_answers(DISCOVERED))
    async with Client(raw.client_end, mode="handshake") as client:
        assert client.era == "handshake"
    assert raw.methods()[0] == "initialize"
    assert "server/discover" not in raw.methods()


async def test_silence_is_a_legacy_server_after_the_probe_timeout() -> None:
    raw = RawServer(legacy_answers(None))  # never answers server/discover
    loop = asyncio.get_running_loop()
    started = loop.time()
    async with Client(raw.client_end, mode="auto", probe_timeout=0.3) as client:
        assert client.era == "handshake"
    assert 0.3 <= loop.time() - started < 2
    # initialize joins the probe, which stays open until the handshake settles the era
    assert raw.methods()[:4] == [
        "server/discover",
        "initialize",
        "notifications/initialized",
        "notifications/cancelled",
    ]


# -- logging and legacy-only methods in the modern era -----------------------------------


async def test_log_level_is_stamped_on_later_requests_instead_of_set_level() -> None:
    raw = RawServer(legacy_answers(DISCOVERED))
    async with Client(raw.client_end, mode="auto") as client:
        await client.set_logging_level("warning")
        await client.request("tools/call", {"name": "x", "arguments": {}})
        with pytest.raises(ValueError, match="unknown log level"):
            await client.set_logging_level("loud")
        with pytest.raises(LocalProtocolViolation, match="listen"):
            await client.subscribe_resource("file:///x")
    assert "logging/setLevel" not in raw.methods()
    call = next(m for m in raw.seen if m.get("method") == "tools/call")
    assert call["params"]["_meta"][LEVEL] == "warning"
    assert call["params"]["_meta"][VERSION] == "2026-07-28"


# -- stdio: a silent legacy server, and the era cache ----------------------------------------

SILENT_LEGACY = textwrap.dedent(
    """
    import json, sys
    log = open(sys.argv[1], "a")
    for line in sys.stdin:
        message = json.loads(line)
        log.write(message.get("method", "?") + "\\n"); log.flush()
        if message.get("method") == "initialize":
            result = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                      "serverInfo": {"name": "silent", "version": "1"}}
            print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}),
                  flush=True)
        elif message.get("method") == "tools/list":
            print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {"tools": []}}),
                  flush=True)
    """
)


async def test_a_silent_legacy_server_costs_the_probe_timeout_once_per_process(
    tmp_path: Path,
) -> None:
    script = tmp_path / "silent.py"
    script.write_text(SILENT_LEGACY)
    log = tmp_path / "log"
    argv = [sys.executable, str(script), str(log)]
    loop = asyncio.get_running_loop()
    started = loop.time()
    async with Client(argv, probe_timeout=0.5) as client:
        assert client.era == "handshake"
        assert client.protocol_version == "2025-06-18"
        assert (await client.list_tools()).tools == []  # answered in the era it chose
    first = loop.time() - started
    assert first >= 0.5
    assert log.read_text().split()[:2] == ["server/discover", "initialize"]
    log.unlink()
    started = loop.time()
    async with Client(argv, probe_timeout=0.5) as client:  # remembered: no probe
        assert client.era == "handshake"
    assert loop.time() - started < first
    assert log.read_text().split()[0] == "initialize"
    assert "server/discover" not in log.read_text()


MODERN_ONLY = textwrap.dedent(
    """
    import json, sys
    log = open(sys.argv[1], "a")
    log.write("started\\n"); log.flush()
    discovered = json.loads(sys.argv[2])
    for line in sys.stdin:
        message = json.loads(line)
        method = message.get("method", "?")
        log.write(method + "\\n"); log.flush()
        if "id" not in message:
            continue
        if method == "initialize":
            error = {"code": -32601, "message": "Method not found"}
            answer = {"jsonrpc": "2.0", "id": message["id"], "error": error}
        else:
            result = discovered if method == "server/discover" else {"resultType": "complete"}
            answer = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        print(json.dumps(answer), flush=True)
    """
)


async def test_a_remembered_era_that_no_longer_holds_is_probed_again(tmp_path: Path) -> None:
    # The cache said legacy, but the server behind the same command is modern-only now.
    script = tmp_path / "modern_only.py"
    script.write_text(MODERN_ONLY)
    log = tmp_path / "log"
    argv = [sys.executable, str(script), str(log), orjson.dumps(DISCOVERED).decode()]
    key = era_module.server_key(argv)
    assert key is not None
    era_module.ERAS[key] = "handshake"
    async with Client(argv, mode="auto") as client:
        assert client.era == "per-request"
    # Refused initialize on the first process, then a second process probed afresh.
    assert log.read_text().split()[:4] == ["started", "initialize", "started", "server/discover"]
    assert era_module.ERAS[key] == "2026-07-28"


async def test_unsupported_version_naming_a_version_we_speak_is_retried() -> None:
    refusals = [("error", -32022, "Unsupported", {"supported": ["2026-07-28", "2025-11-25"]})]

    def answer(message: JSONObject) -> Any:
        if message["method"] == "server/discover" and refusals:
            return refusals.pop()
        return legacy_answers(DISCOVERED)(message)

    raw = RawServer(answer)
    async with Client(raw.client_end, mode="auto") as client:
        assert client.era == "per-request"
    assert raw.methods()[:2] == ["server/discover", "server/discover"]
    first, second = (m for m in raw.seen if m.get("method") == "server/discover")
    assert first["id"] != second["id"]


async def test_a_server_that_always_refuses_the_version_is_given_up_on() -> None:
    refusal = ("error", -32022, "Unsupported", {"supported": ["2026-07-28"]})
    raw = RawServer(legacy_answers(refusal))
    with pytest.raises(EraMismatch):
        async with Client(raw.client_end, mode="auto"):
            pass
    assert raw.methods().count("server/discover") == era_module.MAX_PROBES


STRICT_LEGACY = textwrap.dedent(
    """
    import json, sys
    log = open(sys.argv[1], "a")
    for line in sys.stdin:
        message = json.loads(line)
        log.write(message.get("method", "?") + "\\n"); log.flush()
        if message.get("method") == "initialize":
            result = {"protocolVersion": "2025-03-26", "capabilities": {},
                      "serverInfo": {"name": "strict", "version": "1"}}
            print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}),
                  flush=True)
        elif message.get("method") != "notifications/initialized":
            if "id" in message and message.get("method") == "ping":
                print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {}}),
                      flush=True)
            else:
                sys.exit(3)  # anything unexpected before initialize: give up
    """
)


async def test_a_stdio_server_that_exits_at_the_probe_is_started_again_for_initialize(
    tmp_path: Path,
) -> None:
    script = tmp_path / "strict.py"
    script.write_text(STRICT_LEGACY)
    log = tmp_path / "log"
    async with Client([sys.executable, str(script), str(log)]) as client:
        assert client.era == "handshake"
        assert client.protocol_version == "2025-03-26"
        await client.ping()
    assert log.read_text().split() == [
        "server/discover",
        "initialize",
        "notifications/initialized",
        "ping",
    ]


async def test_a_refused_initialize_in_pinned_legacy_mode_raises_it() -> None:
    raw = RawServer(lambda message: ("error", -32602, "bad version", None))
    era_module.ERAS["stdio:whatever"] = "handshake"
    with pytest.raises(ProtocolError, match="bad version"):
        async with Client(raw.client_end, mode="handshake"):
            pass


async def test_cancelling_a_modern_call_on_a_channel_sends_notifications_cancelled() -> None:
    def answer(message: JSONObject) -> Any:
        return DISCOVERED if message["method"] == "server/discover" else None  # calls hang

    raw = RawServer(answer)
    async with Client(raw.client_end, mode="auto") as client:
        call = asyncio.ensure_future(client.request("tools/call", {"name": "slow"}))
        await raw.received("tools/call")
        call.cancel()
        await raw.received("notifications/cancelled")
    sent = next(m for m in raw.seen if m.get("method") == "tools/call")
    cancelled = [m for m in raw.seen if m.get("method") == "notifications/cancelled"]
    assert [m["params"]["requestId"] for m in cancelled] == [sent["id"]]


@pytest.mark.parametrize("pinned", [{"mode": "handshake"}, {"protocol_version": "2025-06-18"}])
async def test_an_era_a_client_pinned_is_not_remembered_for_the_next(pinned: Any) -> None:
    """Two clients in a row against one dual-era stdio server: the first pins the handshake
    era, the second (auto) still finds 2026-07-28."""
    argv = [sys.executable, str(Path(__file__).parents[2] / "examples" / "demo_server.py")]
    async with Client(argv, **pinned) as client:
        assert client.era == "handshake"
    assert era_module.ERAS == {}
    async with Client(argv) as client:
        assert client.era == "per-request"
    assert list(era_module.ERAS.values()) == ["2026-07-28"]  # what auto found is remembered
