"""`mcpkit proxy TARGET`: serve the server at TARGET through `mcpkit.gateway.proxy`.

    mcpkit proxy "python server.py" --transport http --port 8000   a stdio server on HTTP
    mcpkit proxy http://127.0.0.1:8000/mcp                          an HTTP server on stdio

    mcpkit proxy servers.json --transport http --port 8000      every server of a config

TARGET is what the other commands take (URL, Python file, command line), or a JSON file of
`mcpServers` (or VS Code `servers`): then it serves the gateway, every server named as the
Host names them. `--mode` chooses the era spoken upstream (default: auto), whatever the
downstream clients speak.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def add_parser(commands: Any) -> None:
    """The `proxy` subcommand's arguments."""
    proxy = commands.add_parser("proxy", help="serve another server (any era) on stdio or HTTP")
    proxy.add_argument(
        "target",
        help="URL, command line, or Python file of the upstream; or an mcpServers JSON file",
    )
    proxy.add_argument("--transport", default="stdio", choices=["stdio", "http"])
    proxy.add_argument("--host", default="127.0.0.1", help="HTTP: address to bind")
    proxy.add_argument("--port", type=int, default=8000, help="HTTP: port to bind")
    proxy.add_argument(
        "--env", action="append", default=[], metavar="KEY=VALUE", help="for a command"
    )
    proxy.add_argument("--cwd", help="working directory for a command")
    proxy.add_argument(
        "--mode", default="auto", help="protocol era spoken upstream (as for mcpkit list)"
    )


def serve(args: argparse.Namespace) -> int:
    """Run the proxy (or the gateway, for a configuration file) until stopped. Raises
    UsageError for a bad TARGET or --env, ConfigError for a configuration that cannot be
    read, and what the proxy raises when the upstream cannot be reached."""
    from mcpkit.cli.commands import pair_of
    from mcpkit.cli.loading import UsageError, target_for
    from mcpkit.gateway import gateway, proxy
    from mcpkit.server import Server

    env = dict(pair_of(item, "--env") for item in args.env) or None
    server: Server
    if is_configuration(args.target):
        if env is not None or args.cwd is not None:
            raise UsageError("--env and --cwd are set per server in a configuration file")
        server = gateway(args.target, mode=args.mode)
    else:
        server = proxy(target_for(args.target), env=env, cwd=args.cwd, mode=args.mode)
    if args.transport == "http":
        server.run("http", host=args.host, port=args.port)
    else:
        server.run()
    return 0


def is_configuration(target: str) -> bool:
    """Whether TARGET names a configuration file (an existing `.json` file)."""
    return target.endswith(".json") and Path(target).is_file()
