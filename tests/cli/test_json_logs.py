"""`mcpkit run --log-format json`: every line on stderr one JSON object (time, level, logger,
message, exception), uvicorn's lines too, and the access lines without query strings."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from datetime import datetime
from pathlib import Path

import httpx

from mcpkit import Client
from tests.http.servers import unused_port
from tests.peers import redis_server

SERVER = Path(__file__).with_name("json_logs_server.py")
SECRET = "query-secret-4f1c9a"


async def run_and_collect(*more: str) -> list[str]:
    """Serve, call `fail`, send a request with a token in its query, stop: stderr's lines."""
    port = unused_port()
    argv = [sys.executable, "-m", "mcpkit", "run", str(SERVER), "--transport", "http",
            "--port", str(port), *more]  # fmt: skip
    process = await asyncio.create_subprocess_exec(*argv, stderr=asyncio.subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    try:
        async with httpx.AsyncClient(timeout=10) as http:
            for _ in range(600):
                try:
                    await http.get(f"{base}/healthz")
                    break
                except httpx.TransportError:
                    await asyncio.sleep(0.05)
            await http.get(f"{base}/healthz?access_token={SECRET}")
        async with Client(f"{base}/mcp", timeout=30) as client:
            await client.call_tool("fail", {})
        process.send_signal(signal.SIGTERM)
        assert process.stderr is not None
        out = await asyncio.wait_for(process.stderr.read(), 30)
        await asyncio.wait_for(process.wait(), 30)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    return out.decode().splitlines()


async def test_every_line_is_json_with_the_fields_and_no_query_string() -> None:
    lines = await run_and_collect("--log-format", "json")
    records = [json.loads(line) for line in lines]  # every line, or this raises
    for record in records:
        assert {"time", "level", "logger", "message"} <= set(record)
        assert datetime.fromisoformat(record["time"]).utcoffset() is not None
    loggers = {record["logger"] for record in records}
    assert {"uvicorn.error", "uvicorn.access", "json_logs_server"} <= loggers
    failed = next(r for r in records if r["logger"] == "json_logs_server")
    assert failed["level"] == "ERROR"
    assert failed["message"] == "fail was called"
    assert "RuntimeError: the tool broke" in failed["exception"]
    access = [r["message"] for r in records if r["logger"] == "uvicorn.access"]
    assert any("GET /healthz HTTP/1.1" in message for message in access)
    assert not any(SECRET in line for line in lines)


async def test_text_is_still_the_default() -> None:
    lines = await run_and_collect()
    failed = [line for line in lines if "fail was called" in line]
    assert failed, lines
    assert not failed[0].startswith("{")


async def test_workers_log_json_and_serve_the_probe_paths_given() -> None:
    with redis_server() as redis:
        port = unused_port()
        argv = [sys.executable, "-m", "mcpkit", "run", str(SERVER), "--transport", "http",
                "--port", str(port), "--redis", redis, "--workers", "2",
                "--log-format", "json", "--health-path", "/live"]  # fmt: skip
        env = {**os.environ, "MCPKIT_REQUEST_STATE_KEYS": "json-logs-tests-key-1"}
        process = await asyncio.create_subprocess_exec(
            *argv, stderr=asyncio.subprocess.PIPE, env=env
        )
        base = f"http://127.0.0.1:{port}"
        try:
            async with httpx.AsyncClient(timeout=10) as http:
                for _ in range(1200):
                    try:
                        live = await http.get(f"{base}/live")
                        break
                    except httpx.TransportError:
                        await asyncio.sleep(0.05)
                assert live.json() == {"status": "ok"}
                assert (await http.get(f"{base}/healthz")).status_code == 404
            async with Client(f"{base}/mcp", timeout=30) as client:
                await client.call_tool("fail", {})
            process.send_signal(signal.SIGTERM)
            assert process.stderr is not None
            out = await asyncio.wait_for(process.stderr.read(), 60)
            await asyncio.wait_for(process.wait(), 60)
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
    records = [json.loads(line) for line in out.decode().splitlines()]
    assert {"uvicorn.error", "uvicorn.access", "json_logs_server"} <= {r["logger"] for r in records}
