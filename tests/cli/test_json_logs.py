"""`mcpkit run --log-format json`: every line on stderr one JSON object (time, level, logger,
message, exception), uvicorn's lines too, and the access lines without query strings, in the
text format (uvicorn's) as in JSON, with one process or several."""

from __future__ import annotations

import json
import sys
from datetime import datetime
from pathlib import Path

import httpx

from mcpkit import Client
from tests.cli.http_process import Running, mcpkit_http
from tests.peers import redis_server

SERVER = Path(__file__).with_name("json_logs_server.py")
SECRET = "query-secret-4f1c9a"


async def run_and_collect(*more: str) -> list[str]:
    """`mcpkit run` the server, `exercise` it: stderr's lines."""
    async with mcpkit_http(["run", SERVER, "--transport", "http", *more], capture=True) as running:
        return await exercise(running)


async def exercise(running: Running, probe: str = "/healthz") -> list[str]:
    """Send requests with secrets in their query (`?access_token=`, a legacy `?session_id=`),
    call `fail`, stop: stderr's lines."""
    await query_secrets(running.base, probe)
    async with Client(f"{running.base}/mcp", timeout=30) as client:
        await client.call_tool("fail", {})
    return await running.stop()


async def query_secrets(base: str, probe: str = "/healthz") -> None:
    async with httpx.AsyncClient(timeout=10) as http:
        await http.get(f"{base}{probe}?access_token={SECRET}")
        await http.get(f"{base}/mcp?session_id={SECRET}", headers={"accept": "text/event-stream"})


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
    assert not any(SECRET in line for line in lines)


async def test_text_access_lines_have_no_query_string() -> None:
    """server.run("http") with uvicorn's text format at info: its access lines name the path
    without the query (the same filter as the JSON format)."""
    program = [str(Path(__file__).with_name("access_log_server.py"))]
    async with mcpkit_http([], program=program, capture=True) as running:
        await query_secrets(running.base)
        lines = await running.stop()
    assert any('"GET /healthz HTTP/1.1" 200' in line for line in lines), lines
    assert any('"GET /mcp HTTP/1.1"' in line for line in lines), lines
    assert not any(SECRET in line for line in lines)


async def test_workers_log_json_and_serve_the_probe_paths_given() -> None:
    env = {"MCPKIT_REQUEST_STATE_KEYS": "json-logs-tests-key-1"}
    with redis_server() as redis:
        args = ["run", SERVER, "--transport", "http", "--redis", redis, "--workers", "2",
                "--log-format", "json", "--health-path", "/live"]  # fmt: skip
        async with mcpkit_http(args, env=env, probe="/live", capture=True) as running:
            async with httpx.AsyncClient(timeout=10) as http:
                assert (await http.get(f"{running.base}/live")).json() == {"status": "ok"}
                assert (await http.get(f"{running.base}/healthz")).status_code == 404
            lines = await exercise(running, "/live")
    records = [json.loads(line) for line in lines]
    assert {"uvicorn.error", "uvicorn.access", "json_logs_server"} <= {r["logger"] for r in records}
    assert not any(SECRET in line for line in lines)


async def test_proxy_takes_the_production_options_in_one_process_and_with_workers() -> None:
    """`mcpkit proxy` (a gateway's usual deployment) logs JSON, serves the probe paths given
    and keeps query strings out of its access lines, as `mcpkit run` does."""
    upstream = f"{sys.executable} -m mcpkit run {SERVER}"  # over stdio
    env = {"MCPKIT_REQUEST_STATE_KEYS": "json-logs-tests-key-2"}
    with redis_server() as redis:
        for more in ([], ["--redis", redis, "--workers", "2"]):
            production = ["--log-format", "json", "--health-path", "/live", "--drain-timeout", "2"]
            args = ["proxy", upstream, "--transport", "http", *more, *production]
            async with mcpkit_http(args, env=env, probe="/live", capture=True) as running:
                async with httpx.AsyncClient(timeout=10) as http:
                    assert (await http.get(f"{running.base}/live")).json() == {"status": "ok"}
                    assert (await http.get(f"{running.base}/healthz")).status_code == 404
                lines = await exercise(running, "/live")
            records = [json.loads(line) for line in lines]  # every line, or this raises
            assert "uvicorn.access" in {r["logger"] for r in records}, more
            assert not any(SECRET in line for line in lines)
