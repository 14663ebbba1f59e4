"""`mcpkit proxy TARGET`: serve the server at TARGET through `mcpkit.gateway.proxy`.

    mcpkit proxy "python server.py" --transport http --port 8000   a stdio server on HTTP
    mcpkit proxy http://127.0.0.1:8000/mcp                          an HTTP server on stdio

    mcpkit proxy servers.json --transport http --port 8000      every server of a config

    mcpkit proxy URL --transport http --redis redis://... --workers 4   several workers

Over HTTP it takes `mcpkit run`'s production options too (cli/run_options.py): --log-format,
--health-path, --ready-path, --drain-timeout, for one process and for workers alike.

`--redis URL [--workers N]` works as for `mcpkit run`: the downstream sessions live in Redis
and any worker serves any request; each session's HTTP upstream sessions follow it from
worker to worker (`mcpkit.gateway.resume`). Every worker needs the same requestState keys
($MCPKIT_REQUEST_STATE_KEYS, which also seal the upstream session records): without them
the command stops at once with a usage error.

TARGET is what the other commands take (URL, Python file, command line), or a JSON file of
`mcpServers` (or VS Code `servers`): then it serves the gateway, every server named as the
Host names them. `--mode` chooses the era spoken upstream (default: auto), whatever the
downstream clients speak.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcpkit.cli.run_options import (
    add_run_options,
    configure_from,
    run_options,
    worker_logging,
    worker_options,
    worker_setup,
)

if TYPE_CHECKING:
    from mcpkit.server import Server

_SPEC = "MCPKIT_PROXY_WORKER"  # what makes the proxy, for the worker processes (JSON)


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
    proxy.add_argument(
        "--start-timeout",
        type=_seconds,
        metavar="SECONDS",
        help="how long an upstream may take to start before the proxy serves without it "
        '(default: 10; a gateway entry\'s own "timeout" wins)',
    )
    proxy.add_argument(
        "--redis", metavar="URL", help="HTTP: share sessions (and upstream sessions) in Redis"
    )
    proxy.add_argument(
        "--workers", type=int, default=1, help="HTTP: worker processes on the port (needs --redis)"
    )
    add_run_options(proxy)


def serve(args: argparse.Namespace) -> int:
    """Run the proxy (or the gateway, for a configuration file) until stopped. Raises
    UsageError for a bad TARGET or --env, for --redis / --workers used wrongly and for an
    app that cannot be made so (no requestState keys for --redis), ConfigError for a
    configuration that cannot be read, and what the proxy raises when the upstream cannot
    be reached."""
    from mcpkit.cli.loading import UsageError

    spec = _spec(args)
    _check_sharing(args)
    configure_from(args)
    if args.redis is not None and args.workers > 1:
        try:
            _serve_workers(spec, args)
        except (ValueError, OSError) as exc:  # the configuration or a port in use
            raise UsageError(str(exc)) from None
        return 0
    server = _server(spec)
    if args.transport != "http":
        server.run()
        return 0
    options: dict[str, Any] = {"host": args.host, "port": args.port, **run_options(args)}
    if args.redis is not None:
        from mcpkit.transports.http.redis_state import RedisState

        options["state"] = RedisState(args.redis)
    try:
        server.run("http", **options)
    except (ValueError, OSError) as exc:
        raise UsageError(str(exc)) from None
    return 0


def _spec(args: argparse.Namespace) -> dict[str, Any]:
    """What makes the proxy, as plain data (workers are new interpreters: it reaches them in
    an environment variable). Raises UsageError for --env or --cwd with a configuration."""
    from mcpkit.cli.commands import pair_of
    from mcpkit.cli.loading import UsageError

    env = dict(pair_of(item, "--env") for item in args.env) or None
    target = args.target
    configuration = is_configuration(target)
    if configuration:
        if env is not None or args.cwd is not None:
            raise UsageError("--env and --cwd are set per server in a configuration file")
        target = str(Path(target).resolve())  # the same file whatever a worker's directory
    return {
        "target": target,
        "configuration": configuration,
        "env": env,
        "cwd": args.cwd,
        "mode": args.mode,
        "start_timeout": args.start_timeout,
    }


def _server(spec: dict[str, Any]) -> Server:
    """The proxy or gateway `spec` describes. Raises UsageError for a bad target."""
    from mcpkit.cli.loading import target_for
    from mcpkit.gateway import gateway, proxy

    bound = {} if spec.get("start_timeout") is None else {"start_timeout": spec["start_timeout"]}
    if spec["configuration"]:
        return gateway(spec["target"], mode=spec["mode"], **bound)
    target = target_for(spec["target"])
    return proxy(target, env=spec["env"], cwd=spec["cwd"], mode=spec["mode"], **bound)


def _seconds(text: str) -> float:
    """A positive number of seconds (argparse type)."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, not {text!r}")
    return value


def _check_sharing(args: argparse.Namespace) -> None:
    from mcpkit.cli.loading import UsageError

    if args.workers < 1:
        raise UsageError("--workers must be at least 1")
    if args.workers > 1 and args.redis is None:
        raise UsageError("--workers needs --redis URL: workers share sessions there")
    if args.redis is not None and args.transport != "http":
        raise UsageError("--redis and --workers are for --transport http")
    if args.transport != "http" and (args.auth_token_env or args.auth_token_file):
        raise UsageError("bearer tokens are for --transport http (stdio has no callers to check)")


def _serve_workers(spec: dict[str, Any], args: argparse.Namespace) -> None:
    """`args.workers` worker processes on one port, each serving `worker_app()` and draining
    on SIGTERM (transports/http/serving.py). Raises ValueError (from `http_app`) when the app
    cannot be made so, OSError for an address that cannot be listened on."""
    import json

    from mcpkit._extras import optional_dependency

    with optional_dependency():  # uvicorn: the 'http' extra
        from mcpkit.transports.http.serving import serve as serve_http
    options = worker_options(args)
    shared = {**spec, "redis": args.redis, "host": args.host, "options": options}
    os.environ[_SPEC] = json.dumps(shared)
    # Made once here first: a configuration error (no sealing keys, ...) stops the command
    # at once instead of each worker failing, and being restarted to fail again.
    worker_app()
    serve_http(
        "mcpkit.cli.proxy:worker_app",
        host=args.host,
        port=args.port,
        workers=args.workers,
        drain_timeout=args.drain_timeout,
        **worker_logging(options),
    )


def worker_app() -> Any:
    """The ASGI app of one worker (its server calls this in each worker process): the proxy of
    `$MCPKIT_PROXY_WORKER` on a `RedisState`."""
    import json

    from mcpkit.transports.http.redis_state import RedisState

    spec = json.loads(os.environ[_SPEC])
    options = worker_setup(spec.get("options") or {})
    state = RedisState(spec["redis"])
    return _server(spec).http_app(state=state, bind_host=spec["host"], **options)


def is_configuration(target: str) -> bool:
    """Whether TARGET names a configuration file (an existing `.json` file)."""
    return target.endswith(".json") and Path(target).is_file()
