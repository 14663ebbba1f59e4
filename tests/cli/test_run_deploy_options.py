"""`mcpkit run --transport http`'s deployment options, run as an operator runs them: bearer
tokens from an environment variable or a file (never the command line), `--max-sessions`
and `--idle-timeout`, in one process and with `--workers N`; and bad values refused in one
line that never shows a token."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from mcpkit import Client
from mcpkit.client import HTTPOptions
from tests.cli.http_process import mcpkit_http
from tests.http.servers import ACCEPT, INITIALIZE
from tests.peers import redis_server

SERVER = Path(__file__).parents[1] / "http" / "health_server.py"
TOKENS = {"APP_TOKENS": "first-token-0123456789,second-token-0123456789"}
KEYS = {"MCPKIT_REQUEST_STATE_KEYS": "run-options-tests-key-1"}

pytestmark = pytest.mark.timeout(300)  # worker processes start slowly on a loaded machine


def run_http(*more: str) -> list[str]:
    return ["run", str(SERVER), "--transport", "http", *more]


def bearer(token: str) -> HTTPOptions:
    return HTTPOptions(headers={"authorization": f"Bearer {token}"})


async def assert_guarded(base: str, tokens: list[str]) -> None:
    """No token: 401 with the metadata's challenge; a wrong one: 401; each good one: served."""
    url = f"{base}/mcp"
    async with httpx.AsyncClient(timeout=10) as http:
        refused = await http.post(url, json=INITIALIZE, headers=ACCEPT)
        assert refused.status_code == 401
        assert "resource_metadata=" in refused.headers["www-authenticate"]
        wrong = {**ACCEPT, "authorization": "Bearer not-the-token"}
        assert (await http.post(url, json=INITIALIZE, headers=wrong)).status_code == 401
    for token in tokens:
        async with Client(url, mode="handshake", timeout=30, http=bearer(token)) as client:
            assert (await client.call_tool("hello", {})).content[0].text == "hi"


async def test_bearer_tokens_from_an_environment_variable() -> None:
    args = run_http("--auth-token-env", "APP_TOKENS")
    async with mcpkit_http(args, env=TOKENS, capture=True) as running:
        await assert_guarded(running.base, TOKENS["APP_TOKENS"].split(","))
        argv = Path(f"/proc/{running.process.pid}/cmdline").read_bytes()
        lines = await running.stop()
    assert b"first-token" not in argv
    assert not [line for line in lines if "token-0123456789" in line]


async def test_the_proxy_takes_the_same_tokens() -> None:
    args = ["proxy", str(SERVER), "--transport", "http", "--auth-token-env", "APP_TOKENS"]
    async with mcpkit_http(args, env=TOKENS) as running:
        await assert_guarded(running.base, ["second-token-0123456789"])
        await running.stop()


@pytest.fixture
def token_file(tmp_path: Path) -> Path:
    path = tmp_path / "tokens"
    path.write_text("# rotated 2026-11\nfile-token-abcdef0123\n\nolder-token-abcdef0123\n")
    path.chmod(0o600)
    return path


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    with redis_server() as url:
        yield url


async def test_bearer_tokens_from_a_file_read_by_every_worker(
    token_file: Path, redis_url: str
) -> None:
    args = run_http("--auth-token-file", str(token_file), "--redis", redis_url, "--workers", "2")
    async with mcpkit_http(args, env=KEYS) as running:
        # each call on a new connection: both workers take some, each checks the token
        await assert_guarded(running.base, ["file-token-abcdef0123"] * 4)
        await assert_guarded(running.base, ["older-token-abcdef0123"])
        await running.stop()


async def initialize(http: httpx.AsyncClient, url: str) -> httpx.Response:
    return await http.post(url, json=INITIALIZE, headers=ACCEPT)


async def test_max_sessions_and_idle_timeout() -> None:
    async with (
        mcpkit_http(run_http("--max-sessions", "1", "--idle-timeout", "1")) as running,
        httpx.AsyncClient(timeout=10) as http,
    ):
        url = f"{running.base}/mcp"
        first = await initialize(http, url)
        assert first.status_code == 200
        full = await initialize(http, url)
        assert full.status_code == 503 and "too many sessions" in full.json()["error"]["message"]
        # the first session, left idle, ends within about a second: a new one then fits
        deadline = time.monotonic() + 30
        while (again := await initialize(http, url)).status_code == 503:
            assert time.monotonic() < deadline
            await asyncio.sleep(0.1)
        assert again.status_code == 200
        session = {**ACCEPT, "mcp-session-id": first.headers["mcp-session-id"],
                   "mcp-protocol-version": "2025-11-25"}  # fmt: skip
        ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
        assert (await http.post(url, json=ping, headers=session)).status_code == 404
        await running.stop()


async def test_allowed_hosts_for_clients_behind_a_proxy() -> None:
    public = {"host": "mcp.example.com"}
    async with httpx.AsyncClient(timeout=10) as http:
        async with mcpkit_http(run_http()) as running:  # loopback names only
            url = f"{running.base}/mcp"
            refused = await http.post(url, json=INITIALIZE, headers={**ACCEPT, **public})
            assert refused.status_code == 421
            await running.stop()
        args = run_http("--allowed-host", "mcp.example.com", "--allowed-host", "mcp.internal")
        async with mcpkit_http(args) as running:
            url = f"{running.base}/mcp"
            for host in ("mcp.example.com", "mcp.internal:8443"):
                served = await http.post(url, json=INITIALIZE, headers={**ACCEPT, "host": host})
                assert served.status_code == 200, served.text
            other = await http.post(url, json=INITIALIZE, headers={**ACCEPT, "host": "evil.test"})
            assert other.status_code == 421
            await running.stop()


def mcpkit(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcpkit", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, **KEYS, **(env or {})},
    )


@pytest.mark.parametrize(
    ("more", "env", "says"),
    [
        (("--auth-token-env", "NO_SUCH_TOKENS"), {},
         "$NO_SUCH_TOKENS (--auth-token-env) holds no token"),
        (("--auth-token-env", "BAD_TOKENS"), {"BAD_TOKENS": "ok-token,secret with space"},
         "$BAD_TOKENS (--auth-token-env): a token may hold only"),
        (("--auth-token-file", "/nonexistent/tokens"), {},
         "cannot read /nonexistent/tokens (--auth-token-file): No such file or directory"),
        (("--auth-resource", "https://mcp.example.com/mcp"), {}, "--auth-resource needs"),
        (("--max-sessions", "0"), {}, "argument --max-sessions: must be at least 1: '0'"),
        (("--idle-timeout", "-1"), {}, "argument --idle-timeout: must be 0 or more seconds"),
    ],
)  # fmt: skip
def test_bad_values_are_one_line_without_the_token(
    more: tuple[str, ...], env: dict[str, str], says: str
) -> None:
    done = mcpkit(*run_http(*more), env=env)
    assert done.returncode == 2, done.stderr
    assert says in done.stderr
    assert "Traceback" not in done.stderr and "secret" not in done.stderr


@pytest.mark.parametrize("command", ["run", "proxy"])
def test_tokens_are_for_http_only(command: str) -> None:
    done = mcpkit(command, str(SERVER), "--auth-token-env", "APP_TOKENS", env=TOKENS)
    assert done.returncode == 2
    assert "bearer tokens are for --transport http" in done.stderr
