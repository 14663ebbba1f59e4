"""`mcpkit run`'s and `mcpkit proxy`'s production options: log format, probe paths, drain bound.

--log-format text|json      json: one JSON object per line (json_logs.py), uvicorn's too
--health-path PATH          HTTP: the liveness probe (default /healthz; "" turns it off)
--ready-path PATH           HTTP: the readiness probe (default /readyz; "" turns it off)
--drain-timeout SECONDS     HTTP: on SIGTERM, how long requests in flight may take (5)
"""

from __future__ import annotations

import argparse
from typing import Any

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


def configure_from(args: argparse.Namespace) -> None:
    """Set up logging as `--log-format` says (text: left to the server and uvicorn)."""
    if args.log_format == "json":
        from mcpkit.cli.json_logs import configure

        configure()


def run_options(args: argparse.Namespace) -> dict[str, Any]:
    """`Server.run(transport="http")`'s keywords from the command line."""
    options: dict[str, Any] = {
        "health_path": args.health_path or None,
        "ready_path": args.ready_path or None,
        "drain_timeout": args.drain_timeout,
    }
    if args.log_format == "json":
        options["log_config"] = None  # uvicorn leaves the JSON handler in place
        options["log_level"] = "info"  # its access lines too
    return options


def worker_options(args: argparse.Namespace) -> dict[str, Any]:
    """The same for `--workers N` (cli/workers.py): JSON values, each worker reading them."""
    options = run_options(args)
    options.pop("log_config", None)
    options.pop("log_level", None)
    options["log_format"] = args.log_format
    return options


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
    return options
