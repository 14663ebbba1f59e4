"""`mcpkit run`'s and `mcpkit proxy`'s production options: log format, probe paths, drain bound.

--log-format text|json      json: one JSON object per line (json_logs.py), uvicorn's too
--health-path PATH          HTTP: the liveness probe (default /healthz; "" turns it off)
--ready-path PATH           HTTP: the readiness probe (default /readyz; "" turns it off)
--drain-timeout SECONDS     HTTP: on SIGTERM, how long requests in flight may take (5)
--max-sessions N            HTTP: at most N handshake-era sessions (10000; 503 past it)
--idle-timeout SECONDS      HTTP: end a session unused this long (1800; 0: never)
--allowed-host NAME         HTTP: a Host the clients use (repeat; then only these are taken)
--auth-token-env/-file ...  HTTP: bearer tokens a caller must present (serve_auth.py)
"""

from __future__ import annotations

import argparse
from typing import Any

from mcpkit.cli.serve_auth import add_auth_options, auth_keywords, auth_source

__all__ = [
    "add_run_options",
    "configure_from",
    "run_options",
    "worker_logging",
    "worker_options",
    "worker_setup",
]


def add_run_options(run: argparse.ArgumentParser) -> None:
    run.add_argument(
        "--log-format",
        choices=["text", "json"],
        default="text",
        help="json: one JSON object per log line (time, level, logger, message, exception)",
    )
    run.add_argument(
        "--health-path", default="/healthz", help='HTTP: the liveness probe ("" for none)'
    )
    run.add_argument(
        "--ready-path", default="/readyz", help='HTTP: the readiness probe ("" for none)'
    )
    run.add_argument(
        "--drain-timeout",
        type=float,
        default=5.0,
        metavar="SECONDS",
        help="HTTP: on SIGTERM, how long requests in flight may still take",
    )
    run.add_argument(
        "--max-sessions",
        type=_at_least_one,
        default=10_000,
        metavar="N",
        help="HTTP: at most N handshake-era sessions at once (503 past it)",
    )
    run.add_argument(
        "--idle-timeout",
        type=_not_negative,
        default=1800.0,
        metavar="SECONDS",
        help="HTTP: end a session after SECONDS without a request (0: never)",
    )
    run.add_argument(
        "--allowed-host",
        action="append",
        dest="allowed_hosts",
        metavar="NAME",
        help="HTTP: a Host clients use (NAME: any port; NAME:PORT); repeat; only these pass",
    )
    add_auth_options(run)


def _at_least_one(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {text!r}")
    return value


def _not_negative(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 <= value < float("inf"):  # NaN and infinity too
        raise argparse.ArgumentTypeError(f"must be 0 or more seconds: {text!r}")
    return value


def configure_from(args: argparse.Namespace) -> None:
    """Set up logging as `--log-format` says (text: left to the server and uvicorn)."""
    if args.log_format == "json":
        from mcpkit.cli.json_logs import configure

        configure()


def _app_options(args: argparse.Namespace) -> dict[str, Any]:
    """`http_app`'s keywords that are JSON values."""
    options: dict[str, Any] = {
        "health_path": args.health_path or None,
        "ready_path": args.ready_path or None,
        "drain_timeout": args.drain_timeout,
        "max_sessions": args.max_sessions,
        "idle_timeout": args.idle_timeout or None,
    }
    if args.allowed_hosts:
        options["allowed_hosts"] = list(args.allowed_hosts)
    return options


def run_options(args: argparse.Namespace) -> dict[str, Any]:
    """`Server.run(transport="http")`'s keywords from the command line. Raises UsageError
    for bearer tokens that cannot be read (serve_auth.py)."""
    options = {**_app_options(args), **auth_keywords(auth_source(args))}
    if args.log_format == "json":
        options["log_config"] = None  # uvicorn leaves the JSON handler in place
        options["log_level"] = "info"  # its access lines too
    return options


def worker_options(args: argparse.Namespace) -> dict[str, Any]:
    """The same for `--workers N` (cli/workers.py): JSON values, each worker reading them
    (where the bearer tokens are, not the tokens: each worker reads them itself)."""
    return {**_app_options(args), **auth_source(args), "log_format": args.log_format}


def worker_logging(options: dict[str, Any]) -> dict[str, Any]:
    """The parent's uvicorn logging keywords for `worker_options` (json: each worker sets
    its handler up itself, `worker_setup`; uvicorn must neither replace it nor hide the
    access lines)."""
    return {"log_level": "info", "log_config": None} if options.get("log_format") == "json" else {}


def worker_setup(options: dict[str, Any]) -> dict[str, Any]:
    """In a worker: set up logging as `worker_options` said; the rest are `http_app`'s
    keywords."""
    options = dict(options)
    if options.pop("log_format", "text") == "json":
        from mcpkit.cli.json_logs import configure

        configure()
    source = {key: options.pop(key) for key in _AUTH_SOURCE if key in options}
    return {**options, **auth_keywords(source)}


_AUTH_SOURCE = ("auth_token_env", "auth_token_file", "auth_resource")
