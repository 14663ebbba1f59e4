"""`mcpkit servers`: start the servers of a configuration file, as a host would, and say where
each stands (state, the reason it failed, its tools)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcpkit.cli.loading import UsageError
from mcpkit.cli.render import as_json, table

if TYPE_CHECKING:
    from mcpkit.host import HostConfig

# Where the usual applications keep their server list, tried in this order without --config.
STANDARD_LOCATIONS = (
    ".mcp.json",  # Claude Code, per project
    ".vscode/mcp.json",  # VS Code, per workspace
    ".cursor/mcp.json",  # Cursor, per project
    "~/.cursor/mcp.json",
    "~/.config/Claude/claude_desktop_config.json",
    "~/Library/Application Support/Claude/claude_desktop_config.json",
)


def find_config(given: str | None) -> Path:
    if given is not None:
        return Path(given).expanduser()
    for candidate in STANDARD_LOCATIONS:
        path = Path(candidate).expanduser()
        if path.is_file():
            return path
    raise UsageError(
        "no configuration found; give --config PATH (looked in "
        + ", ".join(STANDARD_LOCATIONS)
        + ")"
    )


def read_config(given: str | None) -> HostConfig:
    """The configuration at `given` or the usual places; UsageError when there is none or it
    cannot be read."""
    from mcpkit.host import ConfigError, load_config

    try:
        return load_config(find_config(given))
    except (ConfigError, OSError) as exc:
        raise UsageError(str(exc)) from None


async def list_servers(args: Any) -> int:
    from mcpkit.host import HostServers, HostTools, State, Timing

    config = read_config(args.config)
    servers = HostServers(config, timing=Timing(connect_timeout=args.timeout))
    try:
        await servers.start()
        tools: dict[str, list[str]] = {}
        for tool in await HostTools(servers).list():
            tools.setdefault(tool.server, []).append(tool.original)
        statuses = servers.status()
    finally:
        await servers.aclose()
    if args.json:
        rows = [
            {"name": n, "state": s.state.value, "error": s.error, "tools": tools.get(n, [])}
            for n, s in statuses.items()
        ]
        as_json(rows, sys.stdout)
    else:
        lines = []
        for name, status in statuses.items():
            if status.state is State.READY:
                lines.append((name, f"ready: {', '.join(tools.get(name, [])) or '-'}"))
            else:
                lines.append((name, f"{status.state.value}: {status.error or ''}"))
        table(lines, sys.stdout)
    return 0
