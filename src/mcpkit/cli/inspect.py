"""`mcpkit inspect [TARGET]`: the web inspector (mcpkit.inspector), or, with `--json`,
`--diff` or `--replay`, a report for scripts and CI (report.py, replay.py).

    mcpkit inspect app.py                          the page, connected to app.py
    mcpkit inspect --no-browser --port 6274        the page, to choose a server there
    mcpkit inspect app.py --record session.jsonl   ... every message written to a file
    mcpkit inspect app.py --json > v1.json         the server's surface as JSON
    mcpkit inspect app.py --diff v1.json           what changed (exit 1: removed or changed)
    mcpkit inspect app.py --diff v1.json --strict  ... exit 1 for anything added too (CI)
    mcpkit inspect app.py --replay session.jsonl   the recorded requests again (exit 1: differ)
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from mcpkit.cli.loading import UsageError


def add_parser(commands: Any) -> None:
    """The `inspect` subcommand's arguments."""
    from mcpkit.cli.options import TARGET_HELP, add_target_options

    inspect = commands.add_parser(
        "inspect",
        help="the web inspector; --json / --diff / --replay: a report for scripts",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
    )
    inspect.add_argument("target", nargs="?", help=TARGET_HELP + "; or CONFIG.json#NAME")
    add_target_options(inspect, timeout=None)
    inspect.add_argument("--port", type=int, default=0, help="the page's port (default: any)")
    inspect.add_argument("--no-browser", action="store_true", help="print the URL only")
    inspect.add_argument("--record", metavar="FILE", help="write every message to FILE (JSONL)")
    inspect.add_argument(
        "--diff", metavar="OLD", help="compare with a --json report (or another TARGET)"
    )
    inspect.add_argument(
        "--strict",
        action="store_true",
        help="with --diff: fail (exit 1) when anything was added too, not only removed or changed",
    )
    inspect.add_argument(
        "--replay", metavar="FILE", help="send a recording's requests again, report differences"
    )


def run(args: argparse.Namespace) -> int:
    """The page until Ctrl-C, or a report; the exit code. Raises UsageError."""
    if args.strict and args.diff is None:
        raise UsageError("--strict goes with --diff")
    scripted = args.json or args.diff is not None or args.replay is not None
    if scripted:
        if args.target is None:
            raise UsageError("--json, --diff and --replay need a TARGET")
        if args.timeout is None:
            args.timeout = 60.0
        if args.replay is not None:
            from mcpkit.cli import replay

            return asyncio.run(replay.run(args))
        from mcpkit.cli import report

        return asyncio.run(report.run(args))
    serve_page(args)
    return 0


def serve_page(args: argparse.Namespace, on_ready: Any = None) -> None:
    """`run_inspector` with what the command line gave. Raises what it raises."""
    from mcpkit.cli.auth import header_pairs
    from mcpkit.cli.commands import pair_of
    from mcpkit.cli.loading import target_for
    from mcpkit.inspector import run_inspector

    options: dict[str, Any] = {}
    if args.env:
        options["env"] = dict(pair_of(item, "--env") for item in args.env)
    if args.cwd:
        options["cwd"] = args.cwd
    if args.timeout is not None:
        options["timeout"] = args.timeout
    headers = header_pairs(args.header)
    if args.token:
        headers["authorization"] = f"Bearer {args.token}"
    if headers:  # an Authorization header among them: the inspector does not log in
        from mcpkit.client import HTTPOptions

        options["http"] = HTTPOptions(headers=headers)
    if args.target is not None and not args.target.partition("#")[0].endswith(".json"):
        target_for(args.target)  # a missing file is a usage error now, not a page error
    try:
        run_inspector(
            args.target,
            port=args.port,
            open_browser=not args.no_browser,
            mode=args.mode,
            record=args.record,
            client_options=options,
            on_ready=on_ready,
            resolve=target_for,
        )
    except OSError as exc:  # the port is taken
        raise UsageError(str(exc)) from None
