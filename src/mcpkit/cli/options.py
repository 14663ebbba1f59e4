"""Options shared by the subcommands that talk to a server (list, call, ..., inspect)."""

from __future__ import annotations

import argparse

# RFC 5424's severities, as MCP's logging/setLevel takes them (plain data: no import needed)
LOG_LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]


def add_target_options(sub: argparse.ArgumentParser, *, timeout: float | None = 60.0) -> None:
    """What every command that talks to a TARGET takes: --json, --timeout, --env, --cwd,
    --mode and the credentials."""
    from mcpkit.cli.auth import add_credential_options

    sub.add_argument("--json", action="store_true", help="print JSON for scripts")
    sub.add_argument("--timeout", type=float, default=timeout, help="seconds per request")
    sub.add_argument(
        "--env", action="append", default=[], metavar="KEY=VALUE", help="for a command"
    )
    sub.add_argument("--cwd", help="working directory for a command")
    sub.add_argument(
        "--mode",
        default="auto",
        help="protocol era: auto (probe, then fall back), handshake (initialize), "
        "per-request (no handshake), or one per-request version such as 2026-07-28",
    )
    sub.add_argument(
        "--log-level",
        choices=LOG_LEVELS,
        help="ask the server for its log messages at LEVEL and above (shown on stderr)",
    )
    add_credential_options(sub)


TARGET_HELP = (
    "URL, command line, or Python file (an mcpkit server, or a stdio server "
    "written with the official SDK, FastMCP or no SDK at all)"
)
