"""The asyncio runtime around the core, over the in-memory transport pair."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from typing import Any

import pytest

from mcpkit import Client, Server
from mcpkit.errors import ConnectionClosed, ProtocolError, RequestTimeout
from mcpkit.protocol import Connection, ConnectionConfig, RequestReceived, Timeout
from mcpkit.runtime import Session
from mcpkit.transports.memory import memory_pair

CLIENT = ConnectionConfig(role="client", info={"name": "c", "version": "1"})


async def start_pair(
    on_request: Any, server_capabilities: dict[str, Any] | None = None
) -> tuple[Session, Session]:
    """A client session and a server session joined in memory, handshake done."""
    client_end, server_end = memory_pair()
    server_config = ConnectionConfig(
        role="server",
        info={"name": "s", "version": "1"},
        capabilities={"tools": {}} if server_capabilities is None else server_capabilities,
    )
    server = Session(Connection(server_config), server_end, on_request=on_request)
    server.start()
    client = Session(Connection(CLIENT), client_end)
    client.start()
    await client.initialize(Timeout(5))
    return client, server


async def test_sync_handler_is_answered_inline_and_async_handler_in_a_task() -> None:
    seen_tasks: list[asyncio.Task[Any] | None] = []

    async def slow(params: dict[str, Any]) -> dict[str, Any]:
        seen_tasks.append(asyncio.current_task())
        return {"content": [], "n": params["arguments"]["n"]}

    def handler(session: Session, request: RequestReceived) -> Any:
        if request.method == "tools/list":
            return {"tools": []}
        return slow(request.params or {})

    client, _server = await start_pair(handler)
    assert await client.request("tools/list") == {"tools": []}
    results = await asyncio.gather(
        *(client.request("tools/call", {"name": "x", "arguments": {"n": i}}) for i in range(50))
    )
    assert [r["n"] for r in results] == list(range(50))
    assert len({id(t) for t in seen_tasks}) == 50  # each async handler had its own task
    await client.close()


async def test_handler_errors_become_error_answers() -> None:
    def handler(session: Session, request: RequestReceived) -> Any:
        name = (request.params or {}).get("name")
        if name == "protocol":
            raise ProtocolError(-32099, "custom failure", {"why": "test"})
        raise RuntimeError("secret internals")

    client, _ = await start_pair(handler)
    with pytest.raises(ProtocolError) as custom:
        await client.request("tools/call", {"name": "protocol"})
    assert custom.value.code == -32099 and custom.value.data == {"why": "test"}
    with pytest.raises(ProtocolError) as internal:
        await client.request("tools/call", {"name": "other"})
    assert internal.value.code == -32603
    assert "secret" not in internal.value.message  # internals stay in the server's log
    await client.close()


async def test_cancelling_the_caller_cancels_the_handler() -> None:
    started = asyncio.Event()
    handler_cancelled = asyncio.Event()

    async def forever() -> dict[str, Any]:
        started.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            handler_cancelled.set()
            raise
        return {}

    client, server = await start_pair(lambda s, r: forever())
    call = asyncio.create_task(client.request("tools/call", {"name": "x"}))
    await started.wait()
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    await asyncio.wait_for(handler_cancelled.wait(), 2)
    assert server.connection.requests_in_flight == 0
    assert await client.request("ping") == {}  # the connection carries on
    await client.close()


async def test_timeout_raises_and_cancels_on_the_server() -> None:
    handler_cancelled = asyncio.Event()

    async def forever() -> dict[str, Any]:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            handler_cancelled.set()
            raise
        return {}

    client, _ = await start_pair(lambda s, r: forever())
    loop = asyncio.get_running_loop()
    began = loop.time()
    with pytest.raises(RequestTimeout, match=r"0\.2"):
        await client.request("tools/call", {"name": "x"}, timeout=Timeout(0.2))
    assert 0.15 < loop.time() - began < 2
    await asyncio.wait_for(handler_cancelled.wait(), 2)
    await client.close()


async def test_progress_reaches_the_callback_and_resets_the_timeout() -> None:
    async def steps(session: Session, request: RequestReceived) -> dict[str, Any]:
        for step in range(1, 6):
            await asyncio.sleep(0.1)
            session.report_progress(request.id, step, 5, f"step {step}")
        return {"done": True}

    client, _ = await start_pair(steps)
    seen: list[tuple[float, float | None, str | None]] = []
    result = await client.request(
        "tools/call",
        {"name": "x"},
        timeout=Timeout(0.3, reset_on_progress=True, maximum=5),
        on_progress=lambda p, t, m: seen.append((p, t, m)),
    )
    assert result == {"done": True}  # 0.5 s of work under a 0.3 s timeout kept alive by progress
    assert seen == [(float(n), 5, f"step {n}") for n in range(1, 6)]
    await client.close()


async def test_losing_the_peer_fails_every_pending_request_at_once() -> None:
    client_end, server_end = memory_pair()
    client = Session(Connection(CLIENT), client_end)
    client.start()

    async def fake_server() -> None:  # answers initialize, then hangs up mid-request
        init = await server_end.read()
        assert init is not None
        server = Connection(ConnectionConfig(role="server", info={"name": "s", "version": "1"}))
        server.receive(init, 0)
        server_end.write(server.data_to_send())
        for _ in range(2):
            await server_end.read()  # initialized, then the first tools request
        await server_end.close()

    hang_up = asyncio.create_task(fake_server())
    await client.initialize(Timeout(5))
    client.connection.peer_capabilities = {"tools": {}}
    calls = [asyncio.create_task(client.request("tools/list")) for _ in range(3)]
    results = await asyncio.wait_for(asyncio.gather(*calls, return_exceptions=True), 2)
    assert all(isinstance(r, ConnectionClosed) for r in results)
    with pytest.raises(ConnectionClosed):
        await client.request("ping")
    await hang_up


async def test_client_and_server_objects_in_process() -> None:
    server = Server("inproc", version="3.1")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    async with Client(server) as client:
        assert client.server_info == {"name": "inproc", "version": "3.1"}
        result = await client.request("tools/call", {"name": "add", "arguments": {"a": 2, "b": 5}})
        assert result["content"] == [{"type": "text", "text": "7"}]


def test_protocol_core_loads_no_io_or_validation_library() -> None:
    code = (
        "import sys, mcpkit.protocol, mcpkit.errors; "
        "bad = [m for m in ('asyncio', 'anyio', 'socket', 'http', 'httpx', 'starlette', "
        "'pydantic', 'threading') if m in sys.modules]; print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_import_mcpkit_is_light() -> None:
    code = "import sys, mcpkit; print([m for m in ('pydantic', 'asyncio') if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
