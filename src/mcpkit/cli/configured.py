"""`CONFIG.json#NAME` as a TARGET: a server of an `mcpServers` (or VS Code `servers`) file,
started as a host would start it (its command, args, env, cwd; its URL and headers), as the
MCP Inspector's CLI mode does with `--config FILE --server NAME`."""

from __future__ import annotations

from typing import Any

JSONObject = dict[str, Any]


def split(target: str) -> tuple[str, str] | None:
    """("CONFIG.json", "NAME") for a target of that form; None for any other."""
    path, sep, name = target.rpartition("#")
    if not sep or not path.endswith(".json") or not name or "://" in target:
        return None
    return path, name


def configured_server(target: str) -> tuple[Any, JSONObject] | None:
    """The Client target and options of `CONFIG.json#NAME`; None for another form of target.
    Raises UsageError for a file that cannot be read or a name it does not hold."""
    parts = split(target)
    if parts is None:
        return None
    from mcpkit.cli.loading import UsageError
    from mcpkit.cli.servers import read_config

    path, name = parts
    config = read_config(path)
    if name in config.errors:
        raise UsageError(str(config.errors[name]))
    server = config.servers.get(name)
    if server is None:
        known = ", ".join(config.servers) or "none"
        raise UsageError(f"no server {name!r} in {path} (servers: {known})")
    return server.target, server.client_options()
