"""`mcpkit install CLIENT app.py`: add a server to an MCP client's own configuration file.

    mcpkit install claude-desktop app.py [--name N] [--env K=V] [--with PKG] [--dry-run]

Each client keeps its servers in a documented file and key (clients.py). The entry starts the
server with an absolute interpreter path (`python -m mcpkit run /abs/app.py`): the
interpreter that runs this command, so the one where mcpkit and the app's packages are
installed. `--with PKG` (or `--uv`) asks for an environment made on the fly instead: `uv run
--with mcpkit --with PKG ...`, uv's absolute path, where uv is on PATH. The file is read,
the one entry added (or replaced, by name), everything else kept, a timestamped backup made
first; a file that cannot be read as the client's format is left alone (exit 2).
"""

from __future__ import annotations

import argparse
import ast
import os
import shutil
import stat
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcpkit.cli.render import as_json

if TYPE_CHECKING:  # the parser is built at every start: keep its imports light
    from mcpkit.cli.clients import Launch

CLIENT_NAMES = (
    "claude-desktop",
    "claude-code",
    "cursor",
    "vscode",
    "gemini-cli",
    "goose",
    "mcp-json",
    "stdio",
)


def add_parser(commands: Any) -> None:
    """The `install` subcommand's arguments."""
    install = commands.add_parser(
        "install",
        help="add a server to an MCP client's configuration (Claude, Cursor, VS Code, ...)",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
    )
    install.add_argument("client", choices=CLIENT_NAMES, help="the client to configure")
    install.add_argument("app", help="the server: FILE.py[:OBJ]")
    install.add_argument("--name", help="the server's name there (default: the Server's name)")
    install.add_argument(
        "--env", action="append", default=[], metavar="KEY=VALUE", help="environment variable"
    )
    install.add_argument("--env-file", help="a .env file of KEY=VALUE lines")
    install.add_argument(
        "--with",
        dest="packages",
        action="append",
        default=[],
        metavar="PKG",
        help="another package the server needs (runs it with `uv run --with`)",
    )
    install.add_argument(
        "--uv", action="store_true", help="start it with `uv run --with mcpkit` (uv on PATH)"
    )
    uv_options = {
        "--with-editable": "a local project to install editable (uv run --with-editable)",
        "--with-requirements": "a requirements file (uv run --with-requirements)",
        "--python": "the Python version uv runs it with (uv run --python)",
        "--project": "the project folder uv runs it in (uv run --project)",
    }
    for option, text in uv_options.items():
        repeat = option.startswith("--with")
        install.add_argument(
            option, action="append" if repeat else "store", default=[] if repeat else None,
            help=text,
        )  # fmt: skip
    install.add_argument("--config", help="write this file instead of the client's usual one")
    install.add_argument(
        "--dry-run", action="store_true", help="print the change instead of writing it"
    )
    install.add_argument("--json", action="store_true", help="print JSON for scripts")


def run(args: argparse.Namespace) -> int:
    """Install (or print) the entry. Raises UsageError for a bad file, option or config."""
    from mcpkit.cli import clients

    launch = launch_for(args)
    if args.client in ("mcp-json", "stdio"):
        printed = clients.printed(args.client, launch)
        if args.json or args.client == "mcp-json":
            as_json(printed, sys.stdout)
        else:
            print(printed["command"])
        return 0
    client = clients.CLIENTS[args.client]
    path = Path(args.config).expanduser() if args.config else client.path()
    before = path.read_text(encoding="utf-8") if path.is_file() else None
    after = client.merge(before, launch, path)
    if args.dry_run:
        print(f"# {path}")
        sys.stdout.write(after if after.endswith("\n") else after + "\n")
        return 0
    backup = _write(path, before, after)
    _report(args, launch, path, backup)
    return 0


def launch_for(args: argparse.Namespace) -> Launch:
    """The command line, name and environment the client will use."""
    from mcpkit.cli.clients import Launch
    from mcpkit.cli.commands import pair_of
    from mcpkit.cli.loading import UsageError, target_for

    argv = target_for(_checked_file(args.app))
    if not isinstance(argv, list):
        raise UsageError(f"{args.app} is not a Python file (FILE.py[:OBJ])")
    env = _env_file(args.env_file) if args.env_file else {}
    env.update(pair_of(item, "--env") for item in args.env)
    uv_asked = [*args.with_editable, *args.with_requirements, args.python, args.project]
    if args.packages or args.uv or any(uv_asked):
        argv = _with_uv(argv, _uv_options(args))
    name = args.name or server_name(Path(args.app.partition(":")[0]))
    return Launch(name=name, command=argv[0], args=argv[1:], env=env)


def _checked_file(app: str) -> str:
    from mcpkit.cli.loading import UsageError

    file_part = app.partition(":")[0]
    if not file_part.endswith(".py"):
        raise UsageError(f"{app} is not a Python file (FILE.py[:OBJ])")
    return app


def _uv_options(args: argparse.Namespace) -> list[str]:
    """`uv run`'s options for what the command line asked (paths made absolute: the client
    starts the server from a folder of its own)."""
    options = [part for package in ["mcpkit", *args.packages] for part in ("--with", package)]
    for path in args.with_editable:
        options += ["--with-editable", str(Path(path).resolve())]
    for path in args.with_requirements:
        options += ["--with-requirements", str(Path(path).resolve())]
    if args.python:
        options += ["--python", args.python]
    if args.project:
        options += ["--project", str(Path(args.project).resolve())]
    return options


def _with_uv(argv: list[str], options: list[str]) -> list[str]:
    """The same start, in an environment uv makes: `uv run --with mcpkit --with PKG ...`.
    Raises UsageError without uv on PATH."""
    from mcpkit.cli.loading import UsageError

    uv = shutil.which("uv")
    if uv is None:
        raise UsageError(
            "--with, --with-editable, --with-requirements, --python, --project and --uv need "
            "uv on PATH (or install the packages into this Python and leave them out)"
        )
    # argv[0] is this interpreter: uv's own `python` takes its place.
    return [uv, "run", *options, "python", *argv[1:]]


def server_name(path: Path) -> str:
    """The name given as first argument to `Server(...)` / `FastMCP(...)` at module level in
    the file (read, never run), else the file's stem."""
    try:
        code = ast.parse(path.read_bytes())
    except (SyntaxError, ValueError, OSError):
        return path.stem
    for node in code.body:
        value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) else None
        if not isinstance(value, ast.Call) or not value.args:
            continue
        callee = value.func
        called = callee.attr if isinstance(callee, ast.Attribute) else getattr(callee, "id", "")
        first = value.args[0]
        named = isinstance(first, ast.Constant) and isinstance(first.value, str) and first.value
        if called in ("Server", "FastMCP", "MCPServer") and named:
            return str(first.value)  # type: ignore[attr-defined]
    return path.stem


def _env_file(location: str) -> dict[str, str]:
    from mcpkit.cli.loading import UsageError

    try:
        lines = Path(location).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise UsageError(f"cannot read {location}: {exc.strerror}") from None
    env: dict[str, str] = {}
    for raw in lines:
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.removeprefix("export ").partition("=")
        if not sep:
            raise UsageError(f"{location}: expected KEY=VALUE, got {line!r}")
        env[key.strip()] = value.strip().strip("'\"")
    return env


def _write(path: Path, before: str | None, after: str) -> Path | None:
    """Write `after`, keeping what was there as PATH.YYYYmmdd-HHMMSS.bak; the backup.

    A configuration may hold secrets (an `env` of API keys): a new file and the backup are
    readable by their owner only, a file that was there keeps its permissions, and a
    symlinked file (dotfiles kept elsewhere) is written where the link points."""
    target = path.resolve() if path.is_symlink() else path
    backup = None
    if before is not None:
        backup = _backup_name(target)
        shutil.copyfile(target, backup)
        backup.chmod(0o600)
    mode = stat.S_IMODE(target.stat().st_mode) if target.exists() else 0o600
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(target.name + ".mcpkit-tmp")
    temporary.unlink(missing_ok=True)
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as out:
        out.write(after)
    temporary.chmod(mode)
    temporary.replace(target)  # never a half-written configuration
    return backup


def _backup_name(path: Path) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    backup = path.with_name(f"{path.name}.{stamp}.bak")
    count = 1
    while backup.exists():  # two installs in one second keep both originals
        backup = path.with_name(f"{path.name}.{stamp}-{count}.bak")
        count += 1
    return backup


def _report(args: argparse.Namespace, launch: Launch, path: Path, backup: Path | None) -> None:
    if args.json:
        as_json(
            {
                "client": args.client,
                "name": launch.name,
                "file": str(path),
                "backup": None if backup is None else str(backup),
                "command": [launch.command, *launch.args],
            },
            sys.stdout,
        )
        return
    print(f"installed {launch.name!r} for {args.client} in {path}")
    if backup is not None:
        print(f"the previous file is kept as {backup}")
