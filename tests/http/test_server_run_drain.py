"""`server.run(transport="http")` ends 2026-07-28 subscriptions gracefully when stopped."""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path

import httpx

from mcpkit import Client

from .servers import unused_port


async def test_stopping_the_server_ends_a_subscription_with_its_result() -> None:
    port = unused_port()
    script = Path(__file__).with_name("run_http_server.py")
    process = await asyncio.create_subprocess_exec(
        sys.executable, str(script), str(port), stderr=asyncio.subprocess.PIPE
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        async with httpx.AsyncClient() as http:
            for _ in range(250):
                try:
                    await http.get(url)
                    break
                except httpx.ConnectError:
                    await asyncio.sleep(0.02)
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
