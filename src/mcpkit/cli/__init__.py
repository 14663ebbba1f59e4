"""The `mcpkit` command: run a server, or talk to one from the shell.

    mcpkit run app.py[:server] [--transport http --host H --port P [--redis URL] [--workers N]]
    mcpkit list TARGET [--resources --templates --prompts]
    mcpkit call TARGET TOOL key=value ...        values parse as JSON where they can
    mcpkit read TARGET URI
    mcpkit prompt TARGET NAME key=value ...
    mcpkit task get|result|cancel TARGET ID     a task a tool call became
    mcpkit proxy TARGET [--transport http --port P]   serve TARGET here (any era, stdio <-> HTTP)
    mcpkit servers [--config mcp.json]           the servers of a configuration, their state
    mcpkit chat [--config mcp.json]              chat with a model that uses those servers
    mcpkit login URL / mcpkit logout URL         OAuth: store (or forget) tokens for a server
    mcpkit inspect [TARGET]                      the web inspector (a local page, token in its URL)
    mcpkit inspect TARGET --json [--diff OLD]    a report of the server; what changed since OLD
    mcpkit inspect TARGET --replay FILE          re-send a recorded session, report what differs
    mcpkit dev app.py                            the server, restarted on change, in the inspector
    mcpkit install CLIENT app.py                 add it to Claude, Cursor, VS Code, Gemini, Goose
    mcpkit discover                              the servers configured for the usual clients
    mcpkit registry server-json APP --name N --package P   the MCP Registry's server.json
    mcpkit completion bash|zsh|fish              a shell completion script
    mcpkit --version                             the version and the protocol revisions spoken

TARGET is a URL, a Python file, a command line ("npx server"), or CONFIG.json#NAME (a server
of an mcpServers file; `mcpkit discover` lists them). A Python file that imports
mcpkit is served with `mcpkit run`; any other (a server of the official SDK, FastMCP or no SDK
at all) runs over stdio as `python FILE`, or, when it does not start itself, as `mcp run` would.
A URL target uses the tokens `mcpkit login` stored and logs in when the server asks
(`--no-login` fails instead; `--token` or $MCPKIT_TOKEN sends a bearer token instead).
`--json` prints machine-readable JSON. Exit codes: 0 success, 1 the tool reported an error,
2 usage error (or an optional dependency missing: the message names the pip install), 3
connection failure (could not connect, closed, timed out), 4 the server
answered with a protocol error.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import select
import sys
from collections.abc import Callable, Coroutine
from typing import Any

from mcpkit.cli.discover import add_parser as add_discover_command
from mcpkit.cli.exits import EXIT_CONNECTION, EXIT_PROTOCOL, EXIT_TOOL_ERROR, EXIT_USAGE
from mcpkit.cli.install import add_parser as add_install_command
from mcpkit.cli.options import TARGET_HELP, add_target_options
from mcpkit.cli.proxy import add_parser as add_proxy_command
from mcpkit.cli.registry import add_parser as add_registry_command

EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a shell reports for a tool the pipe ended

__all__ = ["EXIT_CONNECTION", "EXIT_PROTOCOL", "EXIT_TOOL_ERROR", "EXIT_USAGE", "main"]


def build_parser() -> argparse.ArgumentParser:
    from mcpkit.cli.auth import add_login_commands
    from mcpkit.cli.inspect import add_parser as add_inspect_command

    first, _, rest = __doc__.partition("\n")
    parser = argparse.ArgumentParser(
        prog="mcpkit",
        description=first,
        epilog=rest.strip(),  # every command in one line each, TARGET, the exit codes
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    parser.add_argument(
        "--version", action=_Version, nargs=0, help="the version and the protocol revisions"
    )
    commands = parser.add_subparsers(dest="command", required=True)
    _add_run(commands)
    _add_talking(commands)
    _add_host_commands(commands)
    add_login_commands(commands)
    add_proxy_command(commands)
    add_inspect_command(commands)
    _add_dev(commands)
    add_install_command(commands)
    add_discover_command(commands)
    add_registry_command(commands)
    completion = commands.add_parser("completion", help="print a shell completion script")
    completion.add_argument("shell", choices=["bash", "zsh", "fish"])
    return parser


class _Version(argparse.Action):
    """--version, printed as written (argparse's own action would re-wrap the lines)."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option: Any = None) -> None:
        print(_version())
        parser.exit()


def _version() -> str:
    from mcpkit._version import __version__
    from mcpkit.types.versions import HANDSHAKE_VERSIONS, PER_REQUEST_VERSIONS

    return (
        f"mcpkit {__version__}\n"
        f"protocol revisions: {', '.join(HANDSHAKE_VERSIONS)} (handshake era); "
        f"{', '.join(PER_REQUEST_VERSIONS)} (per-request era)"
    )


def _add_run(commands: Any) -> None:
    run = commands.add_parser("run", help="serve a Server from a file or module")
    run.add_argument("app", help="FILE[:OBJ] or MODULE[:OBJ]")
    run.add_argument("--transport", default="stdio", choices=["stdio", "http"])
    run.add_argument("--host", default="127.0.0.1", help="HTTP: address to bind")
    run.add_argument("--port", type=int, default=8000, help="HTTP: port to bind")
    run.add_argument(
        "--redis", metavar="URL", help="HTTP: share sessions and stream events through Redis"
    )
    run.add_argument(
        "--workers", type=int, default=1, help="HTTP: worker processes on the port (needs --redis)"
    )
    from mcpkit.cli.run_options import add_run_options

    add_run_options(run)


def _add_talking(commands: Any) -> None:
    def talking(
        name: str, help_text: str, action: list[str] | None = None
    ) -> argparse.ArgumentParser:
        sub: argparse.ArgumentParser = commands.add_parser(name, help=help_text)
        if action is not None:  # `mcpkit task ACTION TARGET ...`
            sub.add_argument("action", choices=action)
        sub.add_argument("target", help=TARGET_HELP)
        add_target_options(sub)
        return sub

    listing = talking("list", "list tools (and resources, templates, prompts)")
    for kind in ("tools", "resources", "templates", "prompts"):
        listing.add_argument(f"--{kind}", action="store_true", help=f"list {kind}")
    for schema in ("input", "output"):
        listing.add_argument(
            f"--{schema}-schema", action="store_true", help=f"show each tool's {schema}Schema"
        )

    call = talking("call", "call a tool")
    call.add_argument("tool")
    call.add_argument("arguments", nargs="*", metavar="key=value")
    call.add_argument("--args", dest="json_args", metavar="JSON", help="exact arguments object")

    read = talking("read", "read a resource")
    read.add_argument("uri")

    prompt = talking("prompt", "get a prompt")
    prompt.add_argument("name")
    prompt.add_argument("arguments", nargs="*", metavar="key=value")

    task = talking("task", "look at, wait for, or cancel a task", ["get", "result", "cancel"])
    # A task id is token_urlsafe: one in 32 starts with "-", which argparse takes for an
    # option; such an id comes back among the unknown arguments (see _parse).
    task.add_argument("task_id", metavar="ID", nargs="?")


def _add_host_commands(commands: Any) -> None:
    servers = commands.add_parser(
        "servers", help="start the servers of a configuration (mcp.json) and show their state"
    )
    servers.add_argument("--config", help="the file (default: the usual locations)")
    servers.add_argument("--json", action="store_true", help="print JSON for scripts")
    servers.add_argument("--timeout", type=float, default=30.0, help="connect timeout per server")
    chat = commands.add_parser(
        "chat", help="chat with a model that uses the servers of a configuration (mcp.json)"
    )
    chat.add_argument("--config", help="the file (default: the usual locations)")
    chat.add_argument(
        "--provider",
        choices=["anthropic", "openai"],
        help="the model API (default: by ANTHROPIC_API_KEY / OPENAI_API_KEY)",
    )
    chat.add_argument("--model", help="the model's name (default: the provider's)")
    chat.add_argument("--base-url", help="the API's URL (an OpenAI-compatible local server)")
    chat.add_argument("--max-steps", type=int, default=10, help="model turns per message")
    chat.add_argument("--timeout", type=float, default=30.0, help="connect timeout per server")
    chat.add_argument(
        "--consent-file", help="where 'always' answers are kept (default: user config dir)"
    )
    chat.add_argument(
        "--headless", action="store_true", help="OAuth logins without a browser (dev servers)"
    )


def _add_dev(commands: Any) -> None:
    dev = commands.add_parser(
        "dev", help="run a server, restart it when a file changes, with the inspector on it"
    )
    dev.add_argument("app", help="FILE.py[:OBJ]")
    dev.add_argument("--port", type=int, default=0, help="the inspector's port (default: any)")
    dev.add_argument("--no-browser", action="store_true", help="do not open the browser")
    dev.add_argument(
        "--no-inspector", action="store_true", help="only run and reload the server (stdio)"
    )
    dev.add_argument(
        "--watch",
        action="append",
        default=[],
        metavar="DIR",
        help="folders to watch (default: the app's folder)",
    )
    dev.add_argument(
        "--server-port", type=int, default=8000, help="--no-inspector: the HTTP port to serve on"
    )


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `mcpkit` command; returns the exit code."""
    from mcpkit.cli.commands import run_command
    from mcpkit.cli.loading import UsageError

    args = _parse(build_parser(), argv)
    _visible_log_lines()
    try:
        return _dispatch(args, run_command)
    except UsageError as exc:
        return _fail(args, f"error: {exc}", EXIT_USAGE, exc)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError as exc:
        if not _stdout_gone():  # a server's pipe, not ours: a connection failure
            return _fail(args, *_describe(exc), exc)
        # The reader went away (`mcpkit list ... | head`): stop quietly, as a shell tool
        # killed by SIGPIPE would, with nothing left to flush at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except Exception as exc:
        return _fail(args, *_describe(exc), exc)


def _visible_log_lines() -> None:
    """Log lines the command prints without a handler of its own (warnings, which can quote a
    server) shown through `visible`: logging's last-resort handler is what prints them."""
    import logging

    from mcpkit.host.visible import VisibleFormatter

    if logging.lastResort is not None:
        logging.lastResort.setFormatter(VisibleFormatter())


def _parse(parser: argparse.ArgumentParser, argv: list[str] | None) -> argparse.Namespace:
    """The arguments; a task ID that starts with "-" is the one unknown argument left."""
    args, unknown = parser.parse_known_args(argv)
    if getattr(args, "command", None) == "task" and args.task_id is None:
        if len(unknown) != 1:
            parser.error("mcpkit task needs one ID")
        args.task_id = unknown.pop()
    if unknown:
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    return args


def _dispatch(args: Any, run_command: Callable[[Any], Coroutine[Any, Any, int]]) -> int:
    handler = _HANDLERS.get(args.command)
    if handler is not None:
        return handler(args)
    return asyncio.run(run_command(args))


def _run(args: Any) -> int:
    from mcpkit.cli.loading import load_server
    from mcpkit.cli.run_options import configure_from

    configure_from(args)
    if args.transport != "http" and (args.auth_token_env or args.auth_token_file):
        from mcpkit.cli.loading import UsageError

        raise UsageError("bearer tokens are for --transport http (stdio has no callers to check)")
    server = load_server(args.app)
    if args.transport == "http":
        _run_http(server, args)
    else:
        server.run()
    return 0


def _proxy(args: Any) -> int:
    from mcpkit.cli import proxy

    return proxy.serve(args)


def _servers(args: Any) -> int:
    from mcpkit.cli.servers import list_servers

    return asyncio.run(list_servers(args))


def _chat(args: Any) -> int:
    from mcpkit.cli.chat import chat

    return asyncio.run(chat(args))


def _login(args: Any) -> int:
    from mcpkit.cli import auth

    return asyncio.run(auth.login(args)) if args.command == "login" else auth.logout(args)


def _install(args: Any) -> int:
    from mcpkit.cli import install

    return install.run(args)


def _inspect(args: Any) -> int:
    from mcpkit.cli import inspect

    return inspect.run(args)


def _dev(args: Any) -> int:
    from mcpkit.cli import dev

    return dev.run(args)


def _discover(args: Any) -> int:
    from mcpkit.cli import discover

    return discover.run(args)


def _registry(args: Any) -> int:
    from mcpkit.cli import registry

    return registry.run(args)


def _completion(args: Any) -> int:
    from mcpkit.cli.completion import script

    sys.stdout.write(script(args.shell, build_parser()))
    return 0


_HANDLERS: dict[str, Callable[[Any], int]] = {
    "run": _run,
    "proxy": _proxy,
    "servers": _servers,
    "chat": _chat,
    "login": _login,
    "logout": _login,
    "install": _install,
    "inspect": _inspect,
    "dev": _dev,
    "completion": _completion,
    "discover": _discover,
    "registry": _registry,
}


def _run_http(server: Any, args: Any) -> None:
    """One process, or `--workers N` sharing sessions through `--redis` (cli/workers.py).
    Raises UsageError for workers without Redis, and for what the app refuses to be made
    with (ValueError: no requestState sealing keys for a shared state, ...)."""
    from mcpkit.cli.loading import UsageError

    try:
        _serve_http(server, args)
    except (ValueError, OSError) as exc:  # the configuration or a port in use, not a bug
        raise UsageError(str(exc)) from None


def _serve_http(server: Any, args: Any) -> None:
    from mcpkit.cli.loading import UsageError

    if args.workers < 1:
        raise UsageError("--workers must be at least 1")
    if args.workers > 1:
        if args.redis is None:
            raise UsageError(
                "--workers needs --redis URL: workers share sessions and stream events there"
            )
        from mcpkit.cli import workers
        from mcpkit.cli.run_options import worker_options

        workers.serve(
            args.app,
            host=args.host,
            port=args.port,
            redis=args.redis,
            workers=args.workers,
            options=worker_options(args),
        )
        return
    from mcpkit.cli.run_options import run_options

    options = run_options(args)
    if args.redis is not None:
        from mcpkit.transports.http.redis_state import RedisState

        options["state"] = RedisState(args.redis)
    server.run("http", host=args.host, port=args.port, **options)


def _stdout_gone() -> bool:
    """Whether our stdout is a pipe whose reader has closed it."""
    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & select.POLLERR for _, events in poller.poll(0))
    except (OSError, ValueError, AttributeError):  # no poll here, or stdout is no file
        return False


def _describe(exc: Exception) -> tuple[str, int]:
    from mcpkit._extras import missing_extra
    from mcpkit.errors import ConnectionClosed, MCPError, ProtocolError, RequestTimeout

    # An optional dependency that is not installed, wherever it was imported: the message
    # names the `pip install 'mcpkit[EXTRA]'` that brings it.
    if isinstance(exc, ImportError) and (missing := missing_extra(exc)) is not None:
        return f"error: {missing}", EXIT_USAGE
    if isinstance(exc, ProtocolError):
        return f"the server answered with an error: {exc}", EXIT_PROTOCOL
    if isinstance(exc, ConnectionClosed | RequestTimeout | OSError):
        return f"connection failed: {exc}", EXIT_CONNECTION
    if isinstance(exc, MCPError):
        return f"error: {exc}", EXIT_PROTOCOL
    return f"unexpected error: {type(exc).__name__}: {exc}", 1


def _fail(args: Any, message: str, code: int, exc: BaseException) -> int:
    if getattr(args, "debug", False):
        import traceback

        traceback.print_exception(exc)
    from mcpkit.host.visible import visible

    print(f"mcpkit: {visible(message, lines=True)}", file=sys.stderr)  # a server's words in it
    return code
