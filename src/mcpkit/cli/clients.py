"""Where each MCP client keeps its servers, and the entry it expects (`mcpkit install`).

- Claude Desktop: claude_desktop_config.json in its config folder (macOS ~/Library/Application
  Support/Claude, Windows %APPDATA%/Claude, Linux $XDG_CONFIG_HOME/Claude), `mcpServers`.
- Claude Code: ~/.claude.json (its user scope, what `claude mcp add --scope user` writes),
  `mcpServers`, entries with "type": "stdio".
- Cursor: ~/.cursor/mcp.json, `mcpServers`.
- VS Code: the user profile's mcp.json (Code/User/ in the same config folder as Claude's),
  `servers`, entries with "type": "stdio".
- Gemini CLI: ~/.gemini/settings.json, `mcpServers`.
- Goose: ~/.config/goose/config.yaml (Windows %APPDATA%/Block/goose/config), `extensions`,
  entries {name, type: stdio, cmd, args, envs, enabled, timeout} (goose_yaml.py).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from mcpkit.cli.loading import UsageError

JSONObject = dict[str, Any]


@dataclass(frozen=True)
class Launch:
    """How a client starts the server: a command, its arguments, its environment."""

    name: str
    command: str
    args: list[str]
    env: dict[str, str] = field(default_factory=dict)

    def mcp_servers_entry(self) -> JSONObject:
        """The `mcpServers` entry most clients share (Claude Desktop, Cursor, Gemini CLI)."""
        entry: JSONObject = {"command": self.command, "args": self.args}
        if self.env:
            entry["env"] = self.env
        return entry


def config_home() -> Path:
    """The folder desktop applications keep their settings in, for this OS."""
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support"
    if sys.platform == "win32":
        return Path(os.environ.get("APPDATA") or Path.home() / "AppData" / "Roaming")
    return Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")


@dataclass(frozen=True)
class JSONClient:
    """A client whose servers are an object of entries under `key` in a JSON file."""

    path: Callable[[], Path]
    key: str
    entry: Callable[[Launch], JSONObject]

    def merge(self, before: str | None, launch: Launch, where: Path) -> str:
        """The file's new text: `before` with the entry added or replaced, all else kept.
        Raises UsageError when `before` is not a JSON object (the file is left alone)."""
        data = _json_object(before, where)
        servers = data.setdefault(self.key, {})
        if not isinstance(servers, dict):
            raise UsageError(f"{where}: `{self.key}` is not an object; not changing it")
        servers[launch.name] = self.entry(launch)
        return orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n"


@dataclass(frozen=True)
class GooseClient:
    """Goose's YAML configuration, edited as text (no YAML library needed; goose_yaml.py)."""

    path: Callable[[], Path]

    def merge(self, before: str | None, launch: Launch, where: Path) -> str:
        from mcpkit.cli.goose_yaml import with_extension

        return with_extension(before or "", launch.name, goose_entry(launch), where)


def _json_object(text: str | None, where: Path) -> JSONObject:
    if text is None or not text.strip():
        return {}
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise UsageError(
            f"{where} is not plain JSON ({exc}); not changing it (add the entry by hand, "
            "or see it with --dry-run on an empty --config)"
        ) from None
    if not isinstance(data, dict):
        raise UsageError(f"{where} does not hold a JSON object; not changing it")
    return data


def _typed_stdio(launch: Launch) -> JSONObject:
    return {"type": "stdio", **launch.mcp_servers_entry()}


def goose_entry(launch: Launch) -> JSONObject:
    return {
        "enabled": True,
        "name": launch.name,
        "type": "stdio",
        "cmd": launch.command,
        "args": launch.args,
        "envs": launch.env,
        "timeout": 300,
        "description": f"{launch.name} (installed by mcpkit)",
    }


def _goose_path() -> Path:
    if sys.platform == "win32":
        return config_home() / "Block" / "goose" / "config" / "config.yaml"
    return Path.home() / ".config" / "goose" / "config.yaml"


CLIENTS: dict[str, JSONClient | GooseClient] = {
    "claude-desktop": JSONClient(
        lambda: config_home() / "Claude" / "claude_desktop_config.json",
        "mcpServers",
        Launch.mcp_servers_entry,
    ),
    "claude-code": JSONClient(lambda: Path.home() / ".claude.json", "mcpServers", _typed_stdio),
    "cursor": JSONClient(
        lambda: Path.home() / ".cursor" / "mcp.json", "mcpServers", Launch.mcp_servers_entry
    ),
    "vscode": JSONClient(
        lambda: config_home() / "Code" / "User" / "mcp.json", "servers", _typed_stdio
    ),
    "gemini-cli": JSONClient(
        lambda: Path.home() / ".gemini" / "settings.json", "mcpServers", Launch.mcp_servers_entry
    ),
    "goose": GooseClient(_goose_path),
}


def printed(kind: str, launch: Launch) -> JSONObject:
    """What `mcp-json` and `stdio` print: an mcpServers object, or the command line."""
    if kind == "stdio":
        import shlex

        return {"command": shlex.join([launch.command, *launch.args]), "env": launch.env}
    return {"mcpServers": {launch.name: launch.mcp_servers_entry()}}
