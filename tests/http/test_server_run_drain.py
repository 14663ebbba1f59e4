"""`server.run(transport="http")` ends its long-lived responses when stopped: 2026-07-28
subscriptions with their result, handshake-era GET streams and legacy HTTP+SSE streams (without
which uvicorn waits for them forever and the process never stops)."""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path

import httpx

from mcpkit import Client

from .servers import unused_port


async def started(*arguments: str) -> tuple[asyncio.subprocess.Process, str]:
    """run_http_server.py on an unused port, listening; its /mcp URL."""
    port = unused_port()
    script = Path(__file__).with_name("run_http_server.py")
    process = await asyncio.create_subprocess_exec(
        sys.executable, str(script), str(port), *arguments, stderr=asyncio.subprocess.PIPE
    )
    url = f"http://127.0.0.1:{port}/mcp"
    async with httpx.AsyncClient() as http:
        for _ in range(250):
            try:
                await http.get(url)
                break
            except httpx.ConnectError:
                await asyncio.sleep(0.02)
    return process, url


async def test_stopping_the_server_ends_a_subscription_with_its_result() -> None:
    process, url = await started()
    try:
        async with Client(url, mode="2026-07-28", timeout=10) as client:
            async with client.listen(tools=True) as changes:
                assert changes.acknowledged == {"toolsListChanged": True}
                process.send_signal(signal.SIGINT)  # what Ctrl-C does
                seen = [note async for note in changes]  # ends when the server ends it
            assert seen == []
        # uvicorn re-raises the signal once it has shut down
        assert await asyncio.wait_for(process.wait(), 10) in (0, -signal.SIGINT)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "drain-test", "version": "1"},
    },
}


async def test_stopping_the_server_ends_an_open_get_stream() -> None:
    process, url = await started()
    accept = {"accept": "application/json, text/event-stream"}
    try:
        async with httpx.AsyncClient(timeout=10) as http:
            opened = await http.post(url, json=INITIALIZE, headers=accept)
            session = {
                "mcp-session-id": opened.headers["mcp-session-id"],
                "mcp-protocol-version": "2025-11-25",
            }
            note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            await http.post(url, json=note, headers={**accept, **session})
            get = {"accept": "text/event-stream", **session}
            async with http.stream("GET", url, headers=get) as stream:
                assert stream.status_code == 200
                process.send_signal(signal.SIGTERM)  # what an orchestrator does
                async for _ in stream.aiter_bytes():  # ends when the server ends it
                    pass
        assert await asyncio.wait_for(process.wait(), 10) in (0, -signal.SIGTERM)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def test_stopping_the_server_ends_a_legacy_sse_stream() -> None:
    process, url = await started("http-sse")
    try:
        async with httpx.AsyncClient(timeout=10) as http:
            sse = url.removesuffix("/mcp") + "/sse"
            async with http.stream("GET", sse, headers={"accept": "text/event-stream"}) as stream:
                assert stream.status_code == 200
                lines = stream.aiter_lines()
                while not (await anext(lines)).startswith("data:"):  # the endpoint event
                    pass
                process.send_signal(signal.SIGTERM)
                async for _ in lines:
                    pass
        assert await asyncio.wait_for(process.wait(), 10) in (0, -signal.SIGTERM)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
