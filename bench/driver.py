"""The shared minimal MCP driver: one asyncio subprocess, orjson, newline-delimited JSON-RPC.

It is the same client for every server, so its cost is a constant and server-alone
figures compare servers only. It does initialize + notifications/initialized, then
the workload: sequential calls, calls pipelined N deep, nothing (cold start), `order`
and echo calls in alternate blocks (W4), or sequential tools/list requests (W5).
Messages from the server that are not responses (notifications, logging) are skipped.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from pathlib import Path
from typing import Any

import orjson
from common import (
    ORDER_ARGUMENTS,
    ORDER_RECEIPT,
    TOOL_COUNT,
    Settings,
    blocks_summary,
    latency_summary,
    throughput,
)

PROTOCOL_VERSION = "2025-11-25"
CLIENT_INFO = {"name": "mcpkit-bench-driver", "version": "1.0.0"}


class ServerError(RuntimeError):
    """The server answered with an error, a wrong result, or went away."""


class Driver:
    def __init__(self, process: asyncio.subprocess.Process, started_ns: int) -> None:
        self.process = process
        self.started_ns = started_ns
        self._next_id = 0
        self._stdin = process.stdin
        self._stdout = process.stdout
        self.reply_bytes = 0  # size of the last line read from the server

    @classmethod
    async def spawn(cls, argv: list[str], stderr: Any = None) -> Driver:
        """Start the server; `stderr` is a file object or None (inherit)."""
        started = time.perf_counter_ns()
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr,
            limit=16 * 1024 * 1024,
        )
        return cls(process, started)

    # -- wire -------------------------------------------------------------------------------

    def _send(self, method: str, params: dict[str, Any] | None = None) -> int:
        self._next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self._next_id, "method": method}
        if params is not None:
            message["params"] = params
        self._stdin.write(orjson.dumps(message) + b"\n")
        return self._next_id

    def _notify(self, method: str) -> None:
        self._stdin.write(orjson.dumps({"jsonrpc": "2.0", "method": method}) + b"\n")

    async def _response(self) -> dict[str, Any]:
        """The next response (anything with an id and no method); raises on an error reply."""
        while True:
            line = await self._stdout.readline()
            self.reply_bytes = len(line)
            if not line:
                raise ServerError(f"server closed stdout (exit code {self.process.returncode})")
            message = orjson.loads(line)
            if "id" in message and "method" not in message:
                if "error" in message:
                    raise ServerError(f"error response: {message['error']}")
                return message

    async def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        sent = self._send(method, params)
        message = await self._response()
        if message["id"] != sent:
            raise ServerError(f"expected id {sent}, got {message['id']}")
        return message["result"]

    # -- MCP --------------------------------------------------------------------------------

    async def initialize(self) -> dict[str, Any]:
        result = await self.request(
            "initialize",
            {"protocolVersion": PROTOCOL_VERSION, "capabilities": {}, "clientInfo": CLIENT_INFO},
        )
        self._notify("notifications/initialized")
        return result

    def _send_echo(self, text: str) -> int:
        return self._send("tools/call", {"name": "echo", "arguments": {"text": text}})

    @staticmethod
    def _check_echo(result: dict[str, Any], text: str) -> None:
        content = result.get("content") or [{}]
        if result.get("isError") or content[0].get("text") != text:
            raise ServerError(f"bad echo result: {result!r}")

    async def call_echo(self, text: str) -> None:
        result = await self.request("tools/call", {"name": "echo", "arguments": {"text": text}})
        self._check_echo(result, text)

    async def sequential(self, calls: int, text: str) -> tuple[list[int], int, list[int]]:
        """`calls` echo calls one after another: latencies, start time, completion times (ns)."""
        latencies, done = [], []
        clock = time.perf_counter_ns
        begin = clock()
        for _ in range(calls):
            start = clock()
            sent = self._send_echo(text)
            message = await self._response()
            end = clock()
            latencies.append(end - start)
            done.append(end)
            if message["id"] != sent:
                raise ServerError(f"expected id {sent}, got {message['id']}")
            self._check_echo(message["result"], text)
        return latencies, begin, done

    async def pipelined(self, calls: int, depth: int, text: str) -> tuple[int, list[int]]:
        """`calls` echo calls keeping `depth` outstanding: start time, completion times (ns)."""
        clock = time.perf_counter_ns
        done = []
        begin = clock()
        sent = 0
        for _ in range(min(depth, calls)):
            self._send_echo(text)
            sent += 1
        for _ in range(calls):
            message = await self._response()
            done.append(clock())
            self._check_echo(message["result"], text)
            if sent < calls:
                self._send_echo(text)
                sent += 1
        return begin, done

    async def timed(
        self, calls: int, method: str, params: dict[str, Any], check: Any
    ) -> tuple[int, list[int], list[int]]:
        """`calls` requests one after another, each result passed to `check`: start time,
        latencies, completion times (ns)."""
        latencies, done = [], []
        clock = time.perf_counter_ns
        begin = clock()
        for _ in range(calls):
            start = clock()
            sent = self._send(method, params)
            message = await self._response()
            end = clock()
            latencies.append(end - start)
            done.append(end)
            if message["id"] != sent:
                raise ServerError(f"expected id {sent}, got {message['id']}")
            check(message["result"])
        return begin, latencies, done

    # -- process ----------------------------------------------------------------------------

    def rss_mb(self) -> float:
        """Resident set size of the server process, from /proc/<pid>/status (MiB)."""
        with open(f"/proc/{self.process.pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        raise ServerError("no VmRSS in /proc status")

    def cpu_ns(self) -> int:
        """CPU time the server has used so far (ns), summed over its live threads.

        /proc/<pid>/task/*/schedstat is exact to the nanosecond, unlike the 10 ms ticks of
        /proc/<pid>/stat; a thread that already exited is missed, which the worker-thread
        pools of the servers measured here do not do within one measurement.
        """
        total = 0
        for task in Path(f"/proc/{self.process.pid}/task").iterdir():
            with contextlib.suppress(FileNotFoundError, ProcessLookupError):
                total += int((task / "schedstat").read_text().split()[0])
        return total

    async def close(self, grace: float = 2.0) -> None:
        """Close stdin (the MCP stdio shutdown); terminate, then kill, if the server lingers."""
        if self.process.returncode is None:
            self._stdin.close()
            if not await self._exits_within(grace):
                self._signal(self.process.terminate)
                if not await self._exits_within(grace):
                    self._signal(self.process.kill)
        await self.process.wait()

    async def _exits_within(self, seconds: float) -> bool:
        try:
            await asyncio.wait_for(self.process.wait(), seconds)
        except TimeoutError:
            return False
        return True

    @staticmethod
    def _signal(send: Any) -> None:
        with contextlib.suppress(ProcessLookupError):
            send()

    async def __aenter__(self) -> Driver:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()


# -- workloads through the driver (server alone; also the raw system's end to end) ----------


async def measure(argv: list[str], workload: str, settings: Settings, stderr: Any = None) -> dict:
    """One repetition of a workload (W1-W5) against the server started by `argv`."""
    if workload == "W3":
        return await _cold_starts(argv, settings, stderr)
    if workload in ("W4", "W5"):
        async with await Driver.spawn(argv, stderr) as driver:
            await driver.initialize()
            run = _models if workload == "W4" else _listing
            return await run(driver, settings)
    async with await Driver.spawn(argv, stderr) as driver:
        await driver.initialize()
        for _ in range(settings.warmup):
            await driver.call_echo(settings.text)
        cpu_before = driver.cpu_ns()
        if workload == "W1":
            calls = settings.calls
            result = latency_summary(*await driver.sequential(calls, settings.text))
        elif workload == "W2":
            calls = settings.pipelined_calls
            result = throughput(*await driver.pipelined(calls, settings.depth, settings.text))
        else:
            raise ValueError(f"unknown workload {workload!r}")
        result["server_cpu_us"] = (driver.cpu_ns() - cpu_before) / calls / 1000
        return result


async def _cold_starts(argv: list[str], settings: Settings, stderr: Any) -> dict:
    """Spawn -> initialize result (ms), and RSS after initialize + one call, per spawn."""
    start_ms, rss_mb = [], []
    for _ in range(settings.spawns):
        async with await Driver.spawn(argv, stderr) as driver:
            await driver.initialize()
            start_ms.append((time.perf_counter_ns() - driver.started_ns) / 1e6)
            await driver.call_echo(settings.text)
            rss_mb.append(driver.rss_mb())
    return {"start_ms": start_ms, "rss_mb": rss_mb}


BLOCKS = 10  # W4: order and echo calls alternate in this many blocks each


def check_receipt(result: dict[str, Any]) -> None:
    if result.get("isError") or result.get("structuredContent") != ORDER_RECEIPT:
        raise ServerError(f"bad order result: {result!r}")


def check_listing(result: dict[str, Any]) -> None:
    if len(result.get("tools", ())) != TOOL_COUNT or result.get("nextCursor"):
        raise ServerError(f"expected {TOOL_COUNT} tools on one page, got {str(result)[:200]}")


async def _models(driver: Driver, settings: Settings) -> dict:
    """W4: `order` (nested pydantic arguments) and echo calls in alternate blocks, so both
    see the same moments of machine load; figures for each, server CPU per call for each."""
    order = ("tools/call", {"name": "order", "arguments": ORDER_ARGUMENTS}, check_receipt)
    text = settings.text
    echo = ("tools/call", {"name": "echo", "arguments": {"text": text}},
            lambda result: Driver._check_echo(result, text))  # fmt: skip
    for method, params, check in (order, echo):
        await driver.timed(settings.model_warmup, method, params, check)
    blocks: dict[str, list] = {"order": [], "echo": []}
    cpu_ns = {"order": 0, "echo": 0}
    sizes = {}
    per_block = max(settings.model_calls // BLOCKS, 1)
    for _ in range(BLOCKS):
        for name, (method, params, check) in (("order", order), ("echo", echo)):
            cpu_before = driver.cpu_ns()
            blocks[name].append(await driver.timed(per_block, method, params, check))
            cpu_ns[name] += driver.cpu_ns() - cpu_before
            sizes[name] = driver.reply_bytes
    calls = per_block * BLOCKS
    result = blocks_summary(blocks["order"])
    result["server_cpu_us"] = cpu_ns["order"] / calls / 1000
    result["reply_bytes"] = sizes["order"]
    echo_result = blocks_summary(blocks["echo"])
    result["echo_p50_us"] = echo_result["p50_us"]
    result["echo_calls_per_s"] = echo_result["calls_per_s"]
    result["echo_server_cpu_us"] = cpu_ns["echo"] / calls / 1000
    result["extra_cpu_us"] = result["server_cpu_us"] - result["echo_server_cpu_us"]
    return result


async def _listing(driver: Driver, settings: Settings) -> dict:
    """W5: sequential tools/list requests against a server with TOOL_COUNT tools."""
    await driver.timed(settings.list_warmup, "tools/list", {}, check_listing)
    cpu_before = driver.cpu_ns()
    calls = settings.list_calls
    begin, latencies, done = await driver.timed(calls, "tools/list", {}, check_listing)
    result = latency_summary(latencies, begin, done)
    result["server_cpu_us"] = (driver.cpu_ns() - cpu_before) / calls / 1000
    result["reply_bytes"] = driver.reply_bytes
    return result
