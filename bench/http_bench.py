"""W6-W8: MCP over Streamable HTTP on uvicorn (one worker, `--loop asyncio`, `--http httptools`,
or `h11` with BENCH_UVICORN_HTTP=h11; every system gets the same).

W6  tools/call echo over HTTP POST, keep-alive connections, driven by a raw-socket asyncio
    HTTP/1.1 client (no httpx): stateful JSON at 1 and 32 concurrent, stateful SSE at 1 and
    32, stateless JSON at 32. Latency p50/p99, calls/s, server CPU per call.
W7  idle session memory: server RSS delta per initialized session, then per open GET stream.
W8  tools/call add(a, b) in the 2026-07-28 era: stateless POSTs, no initialize, the `_meta`
    envelope on every request, `Mcp-Method`/`Mcp-Name` headers; mcpkit, the official SDK and
    the raw ASGI reference, next to mcpkit's own stateful JSON (2025-11-25 session), at 1 and
    32 concurrent. Every answer is checked: resultType "complete" (per-request) and the sum.

Each measurement starts a fresh server process on a free loopback port.
"""

import asyncio
import contextlib
import os
import socket
import statistics
import time
from dataclasses import dataclass

import orjson
from common import TEXT, percentile
from systems import SERVERS, System

PROTOCOL = "2025-11-25"
PER_REQUEST_VERSION = "2026-07-28"
HOST = "127.0.0.1"

# (name, server mode, concurrency)
CASES = [
    ("json c1", "json", 1),
    ("json c32", "json", 32),
    ("sse c1", "sse", 1),
    ("sse c32", "sse", 32),
    ("stateless c32", "stateless", 32),
]


@dataclass(frozen=True)
class HTTPSettings:
    calls_c1: int = 1500  # measured sequential calls (after warmup)
    calls_c32: int = 4000  # measured calls shared by 32 connections
    # W8 compares mcpkit's two paths, a few percent apart: 4,000 calls at 32 concurrent are
    # a 0.2 s window, whose run-to-run noise on a 2-core machine is of the same size.
    w8_calls_c1: int = 6000
    w8_calls_c32: int = 16000
    warmup: int = 200
    sessions: int = 500  # W7 sessions opened, then as many GET streams

    @classmethod
    def quick(cls) -> "HTTPSettings":
        return cls(
            calls_c1=400,
            calls_c32=1000,
            w8_calls_c1=400,
            w8_calls_c32=1000,
            warmup=50,
            sessions=200,
        )


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def server_cpu_ns(pid: int) -> int:
    """CPU time of all threads of `pid`, from /proc/<pid>/task/*/schedstat (ns)."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        with contextlib.suppress(OSError), open(f"/proc/{pid}/task/{task}/schedstat") as f:
            total += int(f.read().split()[0])
    return total


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


class Conn:
    """One keep-alive HTTP/1.1 connection: request bytes out, (status, headers, body) in.
    Reads Content-Length and chunked bodies (SSE answers on h11 are chunked)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, port: int):
        self.reader, self.writer, self.port = reader, writer, port
        self.headers: dict[str, str] = {}  # sent on every request (an Authorization header)

    @classmethod
    async def open(cls, port: int) -> "Conn":
        reader, writer = await asyncio.open_connection(HOST, port, limit=1 << 20)
        writer.transport.get_extra_info("socket").setsockopt(
            socket.IPPROTO_TCP, socket.TCP_NODELAY, 1
        )
        return cls(reader, writer, port)

    def request_bytes(self, method: str, body: bytes, headers: dict[str, str]) -> bytes:
        lines = [f"{method} /mcp HTTP/1.1", f"Host: {HOST}:{self.port}"]
        lines += [f"{k}: {v}" for k, v in headers.items()]
        lines += [f"{k}: {v}" for k, v in self.headers.items()]
        if method == "POST":
            lines.append(f"Content-Length: {len(body)}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode() + body

    async def head(self) -> tuple[int, dict[str, str]]:
        raw = await self.reader.readuntil(b"\r\n\r\n")
        lines = raw.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        headers = {}
        for line in lines[1:]:
            if line:
                key, _, value = line.partition(":")
                headers[key.strip().lower()] = value.strip()
        return status, headers

    async def body(self, headers: dict[str, str]) -> bytes:
        if "content-length" in headers:
            return await self.reader.readexactly(int(headers["content-length"]))
        if headers.get("transfer-encoding", "").lower() == "chunked":
            parts = []
            while True:
                size = int((await self.reader.readuntil(b"\r\n")).split(b";")[0], 16)
                if size == 0:
                    await self.reader.readuntil(b"\r\n")
                    return b"".join(parts)
                parts.append(await self.reader.readexactly(size + 2))
                parts[-1] = parts[-1][:-2]
        return b""

    async def roundtrip(self, raw: bytes) -> tuple[int, dict[str, str], bytes]:
        self.writer.write(raw)
        status, headers = await self.head()
        return status, headers, await self.body(headers)

    def close(self) -> None:
        self.writer.close()


def base_headers(session: str | None) -> dict[str, str]:
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": PROTOCOL,
    }
    if session:
        headers["Mcp-Session-Id"] = session
    return headers


def rpc_result(headers: dict[str, str], body: bytes) -> dict:
    """The JSON-RPC answer from a JSON body or from the `data:` of an SSE stream."""
    if headers.get("content-type", "").startswith("text/event-stream"):
        for event in body.split(b"\n\n"):
            data = b"\n".join(
                line[5:].lstrip() for line in event.split(b"\n") if line.startswith(b"data:")
            )
            if data:
                message = orjson.loads(data)
                if "result" in message or "error" in message:
                    return message
        raise RuntimeError(f"no answer in SSE body {body[:200]!r}")
    return orjson.loads(body)


INIT = orjson.dumps(
    {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": PROTOCOL,
            "capabilities": {},
            "clientInfo": {"name": "bench-http-driver", "version": "1.0"},
        },
    }
)
INITIALIZED = orjson.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})


async def new_session(conn: Conn, stateless: bool) -> str | None:
    """initialize + notifications/initialized; the Mcp-Session-Id (None when stateless)."""
    status, headers, body = await conn.roundtrip(
        conn.request_bytes("POST", INIT, base_headers(None))
    )
    if status != 200:
        raise RuntimeError(f"initialize: HTTP {status} {body[:200]!r}")
    rpc_result(headers, body)
    session = None if stateless else headers.get("mcp-session-id")
    if not stateless and not session:
        raise RuntimeError("no Mcp-Session-Id in the initialize answer")
    hdrs = base_headers(session)
    status, _, body = await conn.roundtrip(conn.request_bytes("POST", INITIALIZED, hdrs))
    if status not in (200, 202, 204):
        raise RuntimeError(f"notifications/initialized: HTTP {status} {body[:200]!r}")
    return session


def call_bytes(conn: Conn, session: str | None, ident: int) -> bytes:
    body = orjson.dumps(
        {
            "jsonrpc": "2.0",
            "id": ident,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": TEXT}},
        }
    )
    return conn.request_bytes("POST", body, base_headers(session))


def check_echo(message: dict, ident: int) -> None:
    if message["result"]["content"][0]["text"] != TEXT:
        raise RuntimeError(f"bad answer {message!r}")


# --- W8: tools/call add, 2026-07-28 (per-request) and 2025-11-25 (stateful) -------------------

PER_REQUEST_META = {
    "io.modelcontextprotocol/protocolVersion": PER_REQUEST_VERSION,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
}
PER_REQUEST_HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": PER_REQUEST_VERSION,
    "Mcp-Method": "tools/call",
    "Mcp-Name": "add",
}


def add_arguments(ident: int) -> dict:
    """Different numbers on every call, so an answer cannot be a cached one."""
    return {"a": ident, "b": 2}


def per_request_add_bytes(conn: Conn, session: str | None, ident: int) -> bytes:
    """A self-contained 2026-07-28 tools/call: no session, the envelope in `params._meta`."""
    params = {"name": "add", "arguments": add_arguments(ident), "_meta": PER_REQUEST_META}
    body = orjson.dumps({"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": params})
    return conn.request_bytes("POST", body, PER_REQUEST_HEADERS)


def stateful_add_bytes(conn: Conn, session: str | None, ident: int) -> bytes:
    """A 2025-11-25 tools/call inside the session (W6's stateful JSON, with `add`)."""
    params = {"name": "add", "arguments": add_arguments(ident)}
    body = orjson.dumps({"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": params})
    return conn.request_bytes("POST", body, base_headers(session))


def check_add(message: dict, ident: int, per_request: bool) -> None:
    """The right sum, as text (and as structured content when there is some), no error; a
    per-request answer also says resultType "complete". Anything else stops the measurement."""
    result = message.get("result")
    want = sum(add_arguments(ident).values())
    ok = (
        message.get("id") == ident
        and isinstance(result, dict)
        and not result.get("isError")
        and result["content"][0]["text"] == str(want)
        and result.get("structuredContent", {"result": want}) == {"result": want}
        and (not per_request or result.get("resultType") == "complete")
    )
    if not ok:
        raise RuntimeError(f"bad answer to add{tuple(add_arguments(ident).values())}: {message!r}")


def check_per_request_add(message: dict, ident: int) -> None:
    check_add(message, ident, True)


def check_stateful_add(message: dict, ident: int) -> None:
    check_add(message, ident, False)


# W8 rows: (system, server mode). The mode picks the driver's request shape and is passed to
# servers/{system}_add_http.py.
W8_VARIANTS = [
    ("mcpkit", "per-request"),
    ("official", "per-request"),
    ("raw", "per-request"),
    ("mcpkit", "json"),
]
W8_CONCURRENCY = (1, 32)
W8_LABELS = {"per-request": "per-request", "json": "stateful JSON"}


class Server:
    def __init__(self, system: System, mode: str, stderr, file: str = "{}_http.py"):
        self.system, self.mode, self.stderr = system, mode, stderr
        self.file = file.format(system.name)
        self.port = _free_port()
        self.proc: asyncio.subprocess.Process | None = None

    async def __aenter__(self) -> "Server":
        file = SERVERS / self.file
        self.proc = await asyncio.create_subprocess_exec(
            self.system.server_python,
            str(file),
            self.mode,
            str(self.port),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=self.stderr,
            stderr=self.stderr,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.returncode is not None:
                raise RuntimeError(f"server exited {self.proc.returncode}")
            try:
                _, writer = await asyncio.open_connection(HOST, self.port)
                writer.close()
                return self
            except OSError:
                await asyncio.sleep(0.05)
        raise RuntimeError("server did not listen within 30 s")

    async def __aexit__(self, *exc) -> None:
        if self.proc and self.proc.returncode is None:
            self.proc.terminate()
            try:
                await asyncio.wait_for(self.proc.wait(), 5)
            except TimeoutError:
                self.proc.kill()
                await self.proc.wait()


async def together(coroutines) -> None:
    """Run the clients side by side; the first one to fail (a bad answer, an HTTP error)
    stops the others and its error ends the measurement."""
    tasks = [asyncio.ensure_future(c) for c in coroutines]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


async def load(
    port: int,
    stateless: bool,
    concurrency: int,
    calls: int,
    warmup: int,
    *,
    handshake: bool = True,
    call=call_bytes,
    check=check_echo,
    headers_for=None,
) -> dict:
    """`concurrency` keep-alive connections, each with its own session (none without
    `handshake`: 2026-07-28 requests stand alone), each sending calls one after another;
    latencies of the measured calls, calls/s over the measured part. `headers_for(i)`: extra
    headers for connection i's every request."""
    conns = [await Conn.open(port) for _ in range(concurrency)]
    for i, conn in enumerate(conns):
        conn.headers = headers_for(i) if headers_for else {}
    if handshake:
        sessions = [await new_session(c, stateless) for c in conns]
    else:
        sessions = [None] * concurrency
    latencies: list[int] = []

    async def worker(conn: Conn, session: str | None, count: int, record: bool) -> None:
        for i in range(count):
            raw = call(conn, session, i + 1)
            began = time.perf_counter_ns()
            status, headers, body = await conn.roundtrip(raw)
            if record:
                latencies.append(time.perf_counter_ns() - began)
            if status != 200:
                raise RuntimeError(f"tools/call: HTTP {status} {body[:200]!r}")
            check(rpc_result(headers, body), i + 1)

    per = max(warmup // concurrency, 2)
    await together(worker(c, s, per, False) for c, s in zip(conns, sessions, strict=True))
    share = calls // concurrency
    return {
        "conns": conns,
        "sessions": sessions,
        "worker": worker,
        "share": share,
        "latencies": latencies,
    }


async def measure_calls(
    system: System,
    mode: str,
    concurrency: int,
    settings: HTTPSettings,
    stderr,
    workload: str = "W6",
) -> dict:
    calls = settings.calls_c1 if concurrency == 1 else settings.calls_c32
    if workload == "W8":
        calls = settings.w8_calls_c1 if concurrency == 1 else settings.w8_calls_c32
        file = "{}_add_http.py"
        per_request = mode == "per-request"
        shape = {
            "handshake": not per_request,
            "call": per_request_add_bytes if per_request else stateful_add_bytes,
            "check": check_per_request_add if per_request else check_stateful_add,
        }
    else:
        file, shape = "{}_http.py", {}
    async with Server(system, mode, stderr, file) as server:
        state = await load(
            server.port, mode == "stateless", concurrency, calls, settings.warmup, **shape
        )
        return await timed_calls(server, state)


async def timed_calls(server: "Server", state: dict) -> dict:
    """Run the measured calls of a `load` state against `server`; latency, throughput and CPU
    per call (server and driver)."""
    conns, sessions, worker = state["conns"], state["sessions"], state["worker"]
    cpu0, drv0 = server_cpu_ns(server.proc.pid), time.process_time_ns()
    began = time.perf_counter_ns()
    await together(worker(c, s, state["share"], True) for c, s in zip(conns, sessions, strict=True))
    wall = time.perf_counter_ns() - began
    cpu = server_cpu_ns(server.proc.pid) - cpu0
    drv = time.process_time_ns() - drv0
    for conn in conns:
        conn.close()
    lat = sorted(state["latencies"])
    n = len(lat)
    return {
        "p50_us": percentile(lat, 50) / 1e3,
        "p99_us": percentile(lat, 99) / 1e3,
        "calls_per_s": n / (wall / 1e9),
        "server_cpu_us": cpu / n / 1e3,
        "driver_cpu_us": drv / n / 1e3,
        "over_20ms": sum(1 for x in lat if x >= 20_000_000),
    }


async def measure_memory(system: System, settings: HTTPSettings, stderr) -> dict:
    """RSS delta per idle initialized session, then per open GET stream on those sessions."""
    n = settings.sessions
    async with Server(system, "json", stderr) as server:
        pid = server.proc.pid
        # warm: one session and a few calls, so lazy imports and first-use caches are in
        state = await load(server.port, False, 1, 0, 20)
        for conn in state["conns"]:
            conn.close()
        await asyncio.sleep(0.3)
        before = rss_kib(pid)
        conn = await Conn.open(server.port)
        sessions = [await new_session(conn, False) for _ in range(n)]
        conn.close()
        await asyncio.sleep(0.5)
        with_sessions = rss_kib(pid)

        async def open_stream(session: str) -> Conn:
            stream = await Conn.open(server.port)
            headers = {
                "Accept": "text/event-stream",
                "MCP-Protocol-Version": PROTOCOL,
                "Mcp-Session-Id": session,
            }
            stream.writer.write(stream.request_bytes("GET", b"", headers))
            status, _ = await asyncio.wait_for(stream.head(), 10)
            if status != 200:
                raise RuntimeError(f"GET stream: HTTP {status}")
            return stream

        # 50 at a time: mcpkit sends a GET stream's headers only after 50 ms with nothing
        # to send (streams.QUICK), so one at a time would take 25 s for 500
        streams: list[Conn] = []
        for low in range(0, n, 50):
            streams += await asyncio.gather(*(open_stream(s) for s in sessions[low : low + 50]))
        await asyncio.sleep(0.5)
        with_streams = rss_kib(pid)
        for stream in streams:
            stream.close()
    return {
        "session_kib": (with_sessions - before) / n,
        "stream_kib": (with_streams - with_sessions) / n,
        "session_with_stream_kib": (with_streams - before) / n,
        "rss_base_mb": before / 1024,
    }


def median(values: list[float]) -> float:
    return statistics.median(values)


# --- harness integration: schedule, report, targets -----------------------------------

HTTP_WORKLOADS = {
    "W6": "tools/call echo over Streamable HTTP (uvicorn, 1 worker, asyncio loop, "
    + os.environ.get("BENCH_UVICORN_HTTP", "httptools")
    + ")",
    "W7": "idle session memory over Streamable HTTP (server RSS delta per session)",
    "W8": "tools/call add over Streamable HTTP, 2026-07-28 (stateless, _meta envelope) "
    "vs mcpkit's 2025-11-25 stateful JSON (uvicorn, 1 worker, asyncio loop, "
    + os.environ.get("BENCH_UVICORN_HTTP", "httptools")
    + ")",
}
MEMORY_SYSTEMS = ("mcpkit", "official")  # raw has no sessions


def schedule(reps: int, workloads: list[str], runnable: list):
    """Like run.schedule: per repetition, every case and system, system order rotated."""
    for rep in range(reps):
        shift = rep % max(len(runnable), 1)
        order = runnable[shift:] + runnable[:shift]
        if "W6" in workloads:
            for case, mode, concurrency in CASES:
                for system in order:
                    yield rep, "W6", (case, mode, concurrency), system
        if "W7" in workloads:
            for system in order:
                if system.name in MEMORY_SYSTEMS:
                    yield rep, "W7", ("memory", "json", 0), system
        if "W8" in workloads:
            by_name = {system.name: system for system in runnable}
            variants = [(n, m) for n, m in W8_VARIANTS if n in by_name]
            shift8 = rep % max(len(variants), 1)
            for concurrency in W8_CONCURRENCY:
                for name, mode in variants[shift8:] + variants[:shift8]:
                    case = f"{mode} c{concurrency}"
                    yield rep, "W8", (case, mode, concurrency), by_name[name]


async def run_http(
    reps: int, workloads: list[str], runnable: list, settings: HTTPSettings, results, logs_dir, log
) -> None:
    import json

    logs_dir.mkdir(exist_ok=True)
    for rep, workload, (case, mode, concurrency), system in schedule(reps, workloads, runnable):
        key = (workload, case, system.name)
        if key in results.failures:
            continue
        where = f"[{rep + 1}/{reps}] {workload} {case:13} {system.name:8}"
        began = time.perf_counter()
        with (logs_dir / f"{system.name}-http.stderr").open("ab") as stderr:
            try:
                if workload in ("W6", "W8"):
                    run = measure_calls(system, mode, concurrency, settings, stderr, workload)
                else:
                    run = measure_memory(system, settings, stderr)
                sample = await asyncio.wait_for(run, 300)
            except Exception as exc:
                results.fail(key, f"{type(exc).__name__}: {exc}")
                log(f"{where} FAILED {type(exc).__name__}: {exc}")
                continue
        results.add(key, sample)
        log(f"{where} {time.perf_counter() - began:5.1f}s {json.dumps(sample)[:100]}")


def _ratio(a, b):
    return a / b if a is not None and b else None


def _f(value, spec=",.0f", suffix=""):
    return "-" if value is None else f"{value:{spec}}{suffix}"


def report(results, workloads: list[str], systems: list[str]) -> list[str]:
    from report import _render

    out: list[str] = []
    med = results.medians
    if "W6" in workloads:
        out.append(f"\nW6  {HTTP_WORKLOADS['W6']}")
        headers = [
            "",
            "p50 us",
            "p99 us",
            ">=20ms",
            "calls/s",
            "srv CPU us/call",
            "drv CPU us/call",
            "x official",
            "x raw",
        ]
        rows = []
        for case, _, _ in CASES:
            rows.append([case])
            official = med(("W6", case, "official"))
            raw = med(("W6", case, "raw"))
            for name in systems:
                row = med(("W6", case, name))
                if row is None:
                    rows.append([f"  {name}", results.why_missing(("W6", case, name))[:90]])
                    continue
                rows.append(
                    [
                        f"  {name}",
                        _f(row["p50_us"]),
                        _f(row["p99_us"]),
                        _f(row["over_20ms"]),
                        _f(row["calls_per_s"]),
                        _f(row["server_cpu_us"]),
                        _f(row["driver_cpu_us"]),
                        _f(
                            _ratio(row["calls_per_s"], official and official["calls_per_s"]),
                            ".2f",
                            "x",
                        ),
                        _f(_ratio(row["calls_per_s"], raw and raw["calls_per_s"]), ".2f", "x"),
                    ]
                )
        out += _render(headers, rows)
        out.append(
            "  (>=20ms: measured calls at or over 20 ms, median over repetitions;"
            " x official / x raw: calls/s ratios)"
        )
        sse_rows = []
        for name in systems:
            cells = [f"  {name}"]
            for metric, conc in (
                ("p50_us", "c1"),
                ("server_cpu_us", "c1"),
                ("server_cpu_us", "c32"),
                ("calls_per_s", "c32"),
            ):
                json_row, sse_row = (
                    med(("W6", f"json {conc}", name)),
                    med(("W6", f"sse {conc}", name)),
                )
                if metric == "calls_per_s":
                    value = _ratio(json_row and json_row[metric], sse_row and sse_row[metric])
                else:
                    value = _ratio(sse_row and sse_row[metric], json_row and json_row[metric])
                cells.append(_f(value, ".2f", "x"))
            sse_rows.append(cells)
        out.append("\nW6  SSE cost per request relative to JSON (stateful)")
        out += _render(["", "p50 c1", "srv CPU c1", "srv CPU c32", "1/(calls/s) c32"], sse_rows)
    if "W8" in workloads:
        out += w8_report(results, systems)
    if "W7" in workloads:
        out.append(f"\nW7  {HTTP_WORKLOADS['W7']}")
        headers = [
            "",
            "KiB/session",
            "KiB/GET stream",
            "KiB/session+stream",
            "base RSS MB",
            "x official",
        ]
        rows = []
        official = med(("W7", "memory", "official"))
        for name in systems:
            if name not in MEMORY_SYSTEMS:
                continue
            row = med(("W7", "memory", name))
            if row is None:
                rows.append([f"  {name}", results.why_missing(("W7", "memory", name))[:90]])
                continue
            rows.append(
                [
                    f"  {name}",
                    _f(row["session_kib"], ".1f"),
                    _f(row["stream_kib"], ".1f"),
                    _f(row["session_with_stream_kib"], ".1f"),
                    _f(row["rss_base_mb"], ".1f"),
                    _f(
                        _ratio(
                            official and official["session_with_stream_kib"],
                            row["session_with_stream_kib"],
                        ),
                        ".2f",
                        "x",
                    ),
                ]
            )
        out += _render(headers, rows)
    return out


def paired_ratio(results, a: tuple, b: tuple, metric: str) -> float | None:
    """The geometric mean over repetitions of `a`'s metric / `b`'s, each ratio taken within one
    repetition. Two mcpkit rows a few percent apart are compared this way: the drift of a
    shared 2-core machine between repetitions is as large as that difference, and it cancels
    within a repetition. None unless both rows have every repetition."""
    ours, theirs = results.samples.get(a), results.samples.get(b)
    if not ours or not theirs or len(ours) != len(theirs):
        return None
    return statistics.geometric_mean(
        [x[metric] / y[metric] for x, y in zip(ours, theirs, strict=True)]
    )


def w8_label(system: str, mode: str) -> str:
    return f"{system} {W8_LABELS[mode]}"


def w8_report(results, systems: list[str]) -> list[str]:
    """One table per concurrency level (a row per system and mode), then the two ratios."""
    from report import _render

    med = results.medians
    out = [f"\nW8  {HTTP_WORKLOADS['W8']}"]
    headers = [
        "",
        "p50 us",
        "p99 us",
        ">=20ms",
        "calls/s",
        "srv CPU us/call",
        "drv CPU us/call",
        "x official per-request",
        "x raw",
    ]
    rows = []
    variants = [(n, m) for n, m in W8_VARIANTS if n in systems]
    for concurrency in W8_CONCURRENCY:
        rows.append([f"c{concurrency}"])
        official = med(("W8", f"per-request c{concurrency}", "official"))
        raw = med(("W8", f"per-request c{concurrency}", "raw"))
        for name, mode in variants:
            key = ("W8", f"{mode} c{concurrency}", name)
            row = med(key)
            if row is None:
                rows.append([f"  {w8_label(name, mode)}", results.why_missing(key)[:90]])
                continue
            rows.append(
                [
                    f"  {w8_label(name, mode)}",
                    _f(row["p50_us"]),
                    _f(row["p99_us"]),
                    _f(row["over_20ms"]),
                    _f(row["calls_per_s"]),
                    _f(row["server_cpu_us"]),
                    _f(row["driver_cpu_us"]),
                    _f(
                        _ratio(row["calls_per_s"], official and official["calls_per_s"]), ".2f", "x"
                    ),
                    _f(_ratio(row["calls_per_s"], raw and raw["calls_per_s"]), ".2f", "x"),
                ]
            )
    out += _render(headers, rows)
    out.append(
        "  (>=20ms: measured calls at or over 20 ms, median over repetitions;"
        " x official per-request / x raw: calls/s ratios)"
    )
    ratio_rows = []
    for concurrency in W8_CONCURRENCY:
        mine = med(("W8", f"per-request c{concurrency}", "mcpkit"))
        cells = [f"  c{concurrency}"]
        for other in (("per-request", "official"), ("json", "mcpkit")):
            theirs = med(("W8", f"{other[0]} c{concurrency}", other[1]))
            for metric, inverse in (
                ("calls_per_s", False),
                ("server_cpu_us", True),
                ("p50_us", True),
            ):
                a, b = mine and mine[metric], theirs and theirs[metric]
                cells.append(_f(_ratio(b, a) if inverse else _ratio(a, b), ".2f", "x"))
        ratio_rows.append(cells)
    out.append("\nW8  mcpkit per-request relative to official per-request and to stateful JSON")
    out.append(
        "    (calls/s: mcpkit / other; srv CPU and p50: other / mcpkit; > 1 = mcpkit better)"
    )
    out += _render(
        [
            "",
            "calls/s x off",
            "srv CPU x off",
            "p50 x off",
            "calls/s x stateful",
            "srv CPU x stateful",
            "p50 x stateful",
        ],
        ratio_rows,
    )
    return out


def targets(results, workloads: list[str]) -> list[str]:
    med = results.medians
    lines = []

    def check(text, value, limit, at_most, unit="x"):
        if value is None:
            lines.append(f"n/a   {text}")
        else:
            ok = value <= limit if at_most else value >= limit
            lines.append(f"{'PASS' if ok else 'FAIL'}  {text}  (measured {value:.2f}{unit})")

    def get(case, system, metric):
        row = med(("W6", case, system))
        return row and row[metric]

    if "W6" in workloads:
        mine = get("json c32", "mcpkit", "calls_per_s")
        check(
            "W6 stateful JSON, 32 concurrent >= 4x official calls/s",
            _ratio(mine, get("json c32", "official", "calls_per_s")),
            4,
            False,
        )
        check(
            "W6 stateful JSON, 32 concurrent >= 30% of raw ASGI calls/s",
            _ratio(mine, get("json c32", "raw", "calls_per_s")),
            0.30,
            False,
        )
        check(
            "W6 SSE <= 1.5x JSON per request (server CPU per call, 32 concurrent)",
            _ratio(
                get("sse c32", "mcpkit", "server_cpu_us"),
                get("json c32", "mcpkit", "server_cpu_us"),
            ),
            1.5,
            True,
        )
        check(
            "W6 SSE <= 1.5x JSON per request (p50 latency, 1 concurrent)",
            _ratio(get("sse c1", "mcpkit", "p50_us"), get("json c1", "mcpkit", "p50_us")),
            1.5,
            True,
        )
        check(
            "W6 no 20 ms tail at 1 concurrent: SSE p99 < 20 ms",
            get("sse c1", "mcpkit", "p99_us") and get("sse c1", "mcpkit", "p99_us") / 1e3,
            20,
            True,
            " ms",
        )
        check(
            "W6 no 20 ms tail at 1 concurrent: JSON p99 < 20 ms",
            get("json c1", "mcpkit", "p99_us") and get("json c1", "mcpkit", "p99_us") / 1e3,
            20,
            True,
            " ms",
        )
    if "W8" in workloads:

        def w8(case, system):
            row = med(("W8", case, system))
            return row and row["calls_per_s"]

        check(
            "W8 per-request, 32 concurrent >= 3x official per-request calls/s",
            _ratio(w8("per-request c32", "mcpkit"), w8("per-request c32", "official")),
            3,
            False,
        )
        for concurrency in (32, 1):
            per_request = ("W8", f"per-request c{concurrency}", "mcpkit")
            stateful = ("W8", f"json c{concurrency}", "mcpkit")
            medians = _ratio(w8(per_request[1], "mcpkit"), w8(stateful[1], "mcpkit"))
            check(
                f"W8 per-request >= stateful JSON calls/s (mcpkit), {concurrency} concurrent, "
                "paired",
                paired_ratio(results, per_request, stateful, "calls_per_s"),
                1.0,
                False,
            )
            lines[-1] += f"; ratio of the medians {_f(medians, '.2f', 'x')}"
    if "W7" in workloads:
        row = med(("W7", "memory", "mcpkit"))
        check("W7 idle session <= 10 KiB", row and row["session_kib"], 10, True, " KiB")
        check(
            "W7 idle session with an open GET stream <= 40 KiB",
            row and row["session_with_stream_kib"],
            40,
            True,
            " KiB",
        )
    return lines
