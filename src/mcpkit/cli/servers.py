"""`mcpkit servers`: start the servers of a configuration file, as a host would, and say where
each stands (state, the reason it failed, its tools)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcpkit.cli.loading import UsageError
from mcpkit.cli.render import as_json, table

if TYPE_CHECKING:
    from mcpkit.host import HostConfig, ServerStatus
    from mcpkit.host.config import InputSpec

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


def read_config(
    given: str | None, ask: Callable[[InputSpec], str | None] | None = None
) -> HostConfig:
    """The configuration at `given` or the usual places; UsageError when there is none or it
    cannot be read. `ask` answers its VS Code `${input:ID}`s (default: `ask_on_terminal`,
    never on stdout, which keeps only the command's output)."""
    from mcpkit.host import ConfigError, load_config

    if ask is None:
        from mcpkit.cli.questions import ask_on_terminal

        ask = ask_on_terminal
    try:
        return load_config(find_config(given), ask=ask)
    except (ConfigError, OSError) as exc:
        raise UsageError(str(exc)) from None


def file_order(given: str | None) -> list[str]:
    """The servers' names in the order the configuration file lists them (where HostConfig
    keeps the servers it read and the entries it could not apart)."""
    import orjson

    try:
        data = orjson.loads(find_config(given).read_bytes())
        entries = data.get("mcpServers", data.get("servers"))
        return [str(name) for name in entries] if isinstance(entries, dict) else []
    except (OSError, ValueError, AttributeError, UsageError):
        return []


def in_file_order(order: list[str], statuses: dict[str, ServerStatus]) -> dict[str, ServerStatus]:
    """`statuses` in the file's order: entries it could not read among the others."""
    place = {name: n for n, name in enumerate(order)}
    return dict(sorted(statuses.items(), key=lambda item: place.get(item[0], len(place))))


async def list_servers(args: Any) -> int:
    from mcpkit.host import HostServers, HostTools, Timing

    config = read_config(args.config)
    servers = HostServers(config, timing=Timing(connect_timeout=args.timeout))
    try:
        await servers.start()
        tools: dict[str, list[str]] = {}
        for tool in await HostTools(servers).list():
            tools.setdefault(tool.server, []).append(tool.original)
        statuses = in_file_order(file_order(args.config), servers.status())
    finally:
        await servers.aclose()
    if args.json:
        rows = [
            {"name": n, "state": s.state.value, "error": s.error, "tools": tools.get(n, [])}
            for n, s in statuses.items()
        ]
        as_json(rows, sys.stdout)
    else:
        table([(name, state_text(s, tools.get(name, []))) for name, s in statuses.items()],
              sys.stdout)  # fmt: skip
    return 0


def state_text(status: ServerStatus, tools: list[str]) -> str:
    """`ready: a, b`, `failed: why`, `disabled (in the configuration)`, ..."""
    from mcpkit.host import ServerState

    if status.state is ServerState.READY:
        return f"ready: {', '.join(tools) or '-'}"
    if status.error:
        return f"{status.state.value}: {status.error}"
    if status.state is ServerState.DISABLED:
        return "disabled (not started)"
    return status.state.value
