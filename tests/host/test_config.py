"""Host configuration: the `mcpServers` files of Claude Desktop / Cursor / Claude Code, VS Code's
`servers` with `inputs`, variables, unknown keys kept, one bad entry never costing the others;
and the servers read are reached with a real Client (stdio and HTTP)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from mcpkit import Client
from mcpkit.host import ConfigError, InputSpec, load_config
from tests.http.servers import script_serving

ROOT = Path(__file__).resolve().parents[2]
TASKS = str(ROOT / "tests" / "fixtures" / "task_server.py")
ENV = {"HOME": "/home/ada", "API_KEY": "s3cret", "PORT": "8123"}


def test_claude_desktop_and_claude_code_entries_with_variables() -> None:
    config = load_config(
        {
            "mcpServers": {
                "files": {
                    "command": "npx",
                    "args": ["-y", "@scope/files", "${HOME}/notes"],
                    "env": {"KEY": "${API_KEY}", "LEVEL": "${LEVEL:-info}", "N": 3},
                    "cwd": "${env:HOME}",
                },
                "remote": {
                    "type": "http",
                    "url": "http://127.0.0.1:${PORT}/mcp",
                    "headers": {"Authorization": "Bearer ${API_KEY}"},
                },
                "cursor-style": {"url": "https://example.com/mcp"},
                "legacy": {"url": "https://example.com/sse"},
                "typed-sse": {"transport": "sse", "url": "https://example.com/events"},
            }
        },
        environ=ENV,
    )
    assert config.errors == {}
    files = config.servers["files"]
    assert files.transport == "stdio" and files.target == [
        "npx",
        "-y",
        "@scope/files",
        "/home/ada/notes",
    ]
    assert files.env == {"KEY": "s3cret", "LEVEL": "info", "N": "3"} and files.cwd == "/home/ada"
    remote = config.servers["remote"]
    assert (remote.transport, remote.target) == ("http", "http://127.0.0.1:8123/mcp")
    assert remote.headers == {"Authorization": "Bearer s3cret"}
    assert config.servers["cursor-style"].transport == "http"
    assert config.servers["legacy"].transport == "sse"
    assert config.servers["typed-sse"].transport == "sse"
    assert config.servers["typed-sse"].client_options()["mode"] == "handshake"
    assert list(config.servers) == ["files", "remote", "cursor-style", "legacy", "typed-sse"]


def test_vs_code_servers_and_inputs_are_asked_once() -> None:
    asked: list[InputSpec] = []

    def ask(spec: InputSpec) -> str:
        asked.append(spec)
        return "tok-123"

    config = load_config(
        {
            "inputs": [
                {"type": "promptString", "id": "api-key", "description": "Key", "password": True}
            ],
            "servers": {
                "gh": {
                    "type": "http",
                    "url": "https://api.example.com/mcp",
                    "headers": {"Authorization": "Bearer ${input:api-key}"},
                },
                "local": {
                    "type": "stdio",
                    "command": "python",
                    "args": ["server.py"],
                    "env": {"TOKEN": "${input:api-key}", "HOME": "${env:HOME}"},
                },
            },
        },
        environ=ENV,
        ask=ask,
    )
    assert config.errors == {}
    assert [(s.id, s.password, s.description) for s in asked] == [("api-key", True, "Key")]
    assert config.servers["gh"].headers == {"Authorization": "Bearer tok-123"}
    assert config.servers["local"].env == {"TOKEN": "tok-123", "HOME": "/home/ada"}
    without = load_config(
        {
            "inputs": [{"id": "k"}],
            "servers": {"x": {"url": "https://e.x/mcp", "headers": {"A": "${input:k}"}}},
        }
    )
    assert "needs an answer" in str(without.errors["x"])


def test_a_bad_entry_names_its_server_and_field_and_the_others_still_load() -> None:
    config = load_config(
        {
            "mcpServers": {
                "good": {"command": "python", "args": ["a.py"], "disabled": True},
                "unset": {"command": "run", "env": {"TOKEN": "${MISSING}"}},
                "wrong-type": {"type": "websocket", "url": "ws://x"},
                "args": {"command": "run", "args": "not a list"},
                "nothing": {"description": "neither command nor url"},
                "scheme": {"type": "http", "url": "ftp://x"},
                "flag": {"command": "run", "disabled": "yes"},
                "not-object": ["python"],
                "filters": {"command": "run", "allowTools": "all"},
            }
        },
        environ=ENV,
    )
    assert list(config.servers) == ["good"] and config.servers["good"].disabled
    fields = {name: (error.server, error.field) for name, error in config.errors.items()}
    assert fields == {
        "unset": ("unset", "env.TOKEN"),
        "wrong-type": ("wrong-type", "type"),
        "args": ("args", "args"),
        "nothing": ("nothing", None),
        "scheme": ("scheme", "url"),
        "flag": ("flag", "disabled"),
        "not-object": ("not-object", None),
        "filters": ("filters", "allowTools"),
    }
    assert str(config.errors["unset"]) == (
        "server 'unset', field 'env.TOKEN': ${MISSING}: MISSING is not set"
    )


def test_unknown_keys_are_kept_and_tool_filters_apply() -> None:
    entry = {
        "command": "run",
        "autoApprove": ["read"],
        "timeout": 30,
        "allowTools": ["read", "write"],
        "denyTools": ["write"],
    }
    server = load_config({"mcpServers": {"s": entry}}).servers["s"]
    assert server.extra == {"autoApprove": ["read"], "timeout": 30}
    assert [server.offers(t) for t in ("read", "write", "delete")] == [True, False, False]
    assert load_config({"mcpServers": {"s": {"command": "run"}}}).servers["s"].offers("any")


def test_files_and_whole_file_errors(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"s": {"command": "run"}}}))
    assert load_config(path).servers["s"].command == "run"
    path.write_text("{not json")
    with pytest.raises(ConfigError, match="is not JSON"):
        load_config(path)
    with pytest.raises(ConfigError, match="no `mcpServers`"):
        load_config({"other": {}})
    with pytest.raises(ConfigError, match="object of servers"):
        load_config({"mcpServers": []})


async def test_the_servers_read_are_reached_by_a_real_client(tmp_path: Path) -> None:
    with script_serving(TASKS) as url:
        path = tmp_path / ".mcp.json"
        path.write_text(
            json.dumps(
                {
                    "mcpServers": {
                        "local": {"command": sys.executable, "args": [TASKS], "env": {"X": "1"}},
                        "remote": {"type": "http", "url": url, "headers": {"X-Team": "${TEAM}"}},
                    }
                }
            )
        )
        config = load_config(path, environ={"TEAM": "blue"})
        for server in config.servers.values():
            options: dict[str, Any] = server.client_options()
            async with Client(server.target, **options) as client:
                names = {tool.name for tool in await client.list_all_tools()}
                assert {"count", "nightly", "forever"} <= names, server.name
