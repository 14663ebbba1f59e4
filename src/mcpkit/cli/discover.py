"""`mcpkit discover`: the MCP servers already configured on this machine, in the files the
clients keep (the ones `mcpkit install` writes) and in this folder's project files. Each
JSON entry is shown with a TARGET the other commands take (`FILE#NAME`):

    mcpkit discover                 # name, where, TARGET
    mcpkit list ~/.cursor/mcp.json#github

Goose's extensions are listed by name (its YAML is not a TARGET file)."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import orjson

from mcpkit.cli.render import as_json, table

JSONObject = dict[str, Any]
PROJECT_FILES = {  # in the current folder
    ".mcp.json": ("claude-code (project)", "mcpServers"),
    ".vscode/mcp.json": ("vscode (workspace)", "servers"),
    ".cursor/mcp.json": ("cursor (project)", "mcpServers"),
    ".gemini/settings.json": ("gemini-cli (project)", "mcpServers"),
}
_GOOSE_ENTRY = re.compile(r"^(?P<indent> +)(?P<name>\"[^\"]+\"|'[^']+'|[^\s:#][^:#]*):\s*$")


def add_parser(commands: Any) -> None:
    discover = commands.add_parser(
        "discover", help="the servers configured for Claude, Cursor, VS Code, Gemini, Goose"
    )
    discover.add_argument("--json", action="store_true", help="print JSON for scripts")


def found() -> list[JSONObject]:
    """Every server of every file there is: name, source, file, target (None for Goose)."""
    from mcpkit.cli.clients import CLIENTS, JSONClient

    places: list[tuple[str, Path, str]] = []
    for client, spec in CLIENTS.items():
        if isinstance(spec, JSONClient):
            places.append((client, spec.path(), spec.key))
    for relative, (source, key) in PROJECT_FILES.items():
        places.append((source, Path.cwd() / relative, key))
    rows: list[JSONObject] = []
    for source, path, key in places:
        rows += _json_servers(source, path, key)
    goose = CLIENTS["goose"].path()
    rows += [
        {"name": name, "source": "goose", "file": str(goose), "target": None}
        for name in _goose_names(goose)
    ]
    return rows


def _json_servers(source: str, path: Path, key: str) -> list[JSONObject]:
    try:
        data = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return []  # absent, or not plain JSON: nothing to show from it
    entries = data.get(key) if isinstance(data, dict) else None
    if not isinstance(entries, dict):
        return []
    return [
        {"name": str(name), "source": source, "file": str(path), "target": f"{path}#{name}"}
        for name in entries
    ]


def _goose_names(path: Path) -> list[str]:
    """The keys right under the top-level `extensions:` of Goose's config.yaml."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    names: list[str] = []
    inside, indent = False, None
    for line in lines:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line.startswith(" "):
            inside, indent = line.split(":")[0].strip() == "extensions", None
            continue
        match = _GOOSE_ENTRY.match(line) if inside else None
        if match is not None and (indent is None or match["indent"] == indent):
            indent = match["indent"]
            names.append(match["name"].strip("\"'"))
    return names


def run(args: Any) -> int:
    rows = found()
    if args.json:
        as_json(rows, sys.stdout)
        return 0
    if not rows:
        print("no configured servers found")
        return 0
    table([(row["name"], f"{row['source']}: {row['target'] or row['file']}") for row in rows],
          sys.stdout)  # fmt: skip
    return 0
