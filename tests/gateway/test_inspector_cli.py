"""The MCP Inspector's CLI (@modelcontextprotocol/inspector 2.12.0, `--cli`) lists and calls
tools through `mcpkit proxy` over Streamable HTTP: a proxy in front of the official SDK's stdio
server, and the gateway (an `mcpServers` file of two stdio servers, tools namespaced as the Host
names them, an allow list applied), in both of the Inspector's protocol eras."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.http.servers import unused_port, wait_until_listening
from tests.peers import node_env, npm_command

pytestmark = pytest.mark.interop

ROOT = Path(__file__).resolve().parents[2]
OFFICIAL = [sys.executable, str(ROOT / "tests" / "fixtures" / "official_full_server.py")]
ERAS = ["legacy", "modern"]


@contextlib.contextmanager
def proxying(target: str) -> Iterator[str]:
    """`mcpkit proxy TARGET --transport http` on a free port; yields its /mcp URL."""
    port = unused_port()
    command = [sys.executable, "-m", "mcpkit", "proxy", target]
    child = subprocess.Popen([*command, "--transport", "http", "--port", str(port)], cwd=ROOT)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        wait_until_listening(url, 30)
        yield url
    finally:
        child.terminate()
        child.wait(10)


def inspector(home: Path, url: str, era: str, *args: str, exit_code: int = 0) -> dict[str, object]:
    """The Inspector CLI's JSON result (it exits 5 when a tool answers isError)."""
    env = {**os.environ, **node_env(), "HOME": str(home)}  # its catalog stays in tmp
    command = [*npm_command("mcp-inspector"), "--cli", url, "--protocol-era", era]
    done = subprocess.run(
        [*command, *args, "--format", "json"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env,
        cwd=ROOT,
    )
    assert done.returncode == exit_code, done.stdout + done.stderr
    answer: dict[str, object] = json.loads(done.stdout.splitlines()[0])["result"]
    return answer


def tool_names(listing: dict[str, object]) -> list[str]:
    tools = listing["tools"]
    assert isinstance(tools, list)
    return sorted(tool["name"] for tool in tools)


def call(name: str, *arguments: str) -> list[str]:
    return ["--method", "tools/call", "--tool-name", name, "--tool-arg", *arguments]


@pytest.fixture(scope="module")
def proxy_url() -> Iterator[str]:
    with proxying(" ".join(OFFICIAL)) as url:
        yield url


@pytest.fixture(scope="module")
def gateway_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    command, *args = OFFICIAL
    servers = {
        "calc": {"command": command, "args": args, "allowTools": ["add"]},
        "full one": {"command": command, "args": args},
    }
    config = tmp_path_factory.mktemp("gateway") / "servers.json"
    config.write_text(json.dumps({"mcpServers": servers}))
    with proxying(str(config)) as url:
        yield url


@pytest.mark.parametrize("era", ERAS)
def test_the_inspector_lists_and_calls_through_the_proxy(
    proxy_url: str, era: str, tmp_path: Path
) -> None:
    names = tool_names(inspector(tmp_path, proxy_url, era, "--method", "tools/list"))
    assert {"add", "fail", "weather"} <= set(names), names
    added = inspector(tmp_path, proxy_url, era, *call("add", "a=2", "b=3"))
    assert added["content"] == [{"type": "text", "text": "5"}]
    failed = inspector(tmp_path, proxy_url, era, *call("fail", "reason=why"), exit_code=5)
    assert failed["isError"] is True  # a tool error stays a result through the proxy


@pytest.mark.parametrize("era", ERAS)
def test_the_inspector_lists_and_calls_through_the_gateway(
    gateway_url: str, era: str, tmp_path: Path
) -> None:
    names = tool_names(inspector(tmp_path, gateway_url, era, "--method", "tools/list"))
    assert "calc__add" in names and "full_one__weather" in names, names
    assert "calc__weather" not in names  # the allow list holds
    added = inspector(tmp_path, gateway_url, era, *call("calc__add", "a=2", "b=3"))
    assert added["content"] == [{"type": "text", "text": "5"}]
    weather = inspector(tmp_path, gateway_url, era, *call("full_one__weather", "city=Paris"))
    assert weather["structuredContent"] == {"city": "Paris", "celsius": 21.5, "sunny": True}
