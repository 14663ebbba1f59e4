"""`mcpkit registry server-json APP --name io.github.USER/SERVER --package PYPI_NAME`: the MCP
Registry's `server.json` for a server published on PyPI (docs/publishing.md).

What the registry needs and where it comes from:

- `name` (`--name`): reverse-DNS, one slash; `io.github.USER/...` is proved by a GitHub login.
- `description`: `--description`, else the installed package's summary, else the server's
  instructions; at most 100 characters (the registry refuses more: we refuse too, rather than
  cut a sentence in half).
- `version`: `--version`, else the installed package's version, else the server's. One exact
  version: "latest" or a range is refused (the registry refuses it).
- `title`: the server's title, when it has one.
- one package entry: `registryType` "pypi", `identifier` (`--package`), its version,
  `runtimeHint` "uvx" (how a client runs a PyPI server), `transport` stdio, or
  streamable-http at `--url` (a URL template such as http://localhost:{port}/mcp),
  `packageArguments` from each `--arg`, `environmentVariables` from each `--env NAME` /
  `--env NAME=description` and `--secret-env NAME` (secret: a client asks for it and keeps it
  out of sight).
- `repository` (`--repository URL`).

The document is written to stdout, or to `--output FILE`. The schema it follows is the one
named in `$schema` (tests/fixtures/registry holds a copy; the tests validate against it).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from typing import Any

__all__ = ["SCHEMA_URL", "add_parser", "run", "server_json"]

SCHEMA_URL = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
_NAME = re.compile(r"^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$")
_RANGE = re.compile(r"[\^~<>=*\s]|(^|\.)[xX](\.|$)|^latest$")
MAX_DESCRIPTION = 100


def add_parser(commands: Any) -> None:
    registry = commands.add_parser("registry", help="MCP Registry files (server.json)")
    actions = registry.add_subparsers(dest="registry_action", required=True)
    made = actions.add_parser(
        "server-json", help="write the registry's server.json for a server published on PyPI"
    )
    made.add_argument("app", help="FILE[:OBJ] or MODULE[:OBJ]: the server")
    made.add_argument("--name", required=True, help="io.github.USER/SERVER (reverse-DNS)")
    made.add_argument("--package", required=True, help="its name on PyPI")
    made.add_argument("--version", dest="package_version", help="default: the installed one")
    made.add_argument("--description", help="at most 100 characters (default: the summary)")
    made.add_argument(
        "--transport", choices=["stdio", "streamable-http"], default="stdio", help="how it runs"
    )
    made.add_argument("--url", help="streamable-http: its URL (template), e.g. .../{port}/mcp")
    made.add_argument("--arg", action="append", default=[], help="an argument of the package")
    made.add_argument(
        "--env", action="append", default=[], metavar="NAME[=DESCRIPTION]", help="a variable"
    )
    made.add_argument(
        "--secret-env", action="append", default=[], metavar="NAME[=DESCRIPTION]",
        help="a variable holding a secret (a token, a password)",
    )  # fmt: skip
    made.add_argument("--repository", metavar="URL", help="the source repository")
    made.add_argument("--output", "-o", metavar="FILE", help="write here (default: stdout)")


def run(args: argparse.Namespace) -> int:
    """Raises UsageError for what the registry would refuse."""
    from mcpkit.cli.loading import load_server

    server = load_server(args.app)
    document = server_json(server, args)
    text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    if args.output:
        with open(args.output, "w", encoding="utf-8") as out:
            out.write(text)
    else:
        sys.stdout.write(text)
    return 0


def server_json(server: Any, args: argparse.Namespace) -> dict[str, Any]:
    """The document (module docstring). Raises UsageError for a name, description or version
    the registry would refuse, or streamable-http without --url."""
    from mcpkit.cli.loading import UsageError

    if not _NAME.match(args.name) or not 3 <= len(args.name) <= 200:
        raise UsageError(f"--name must look like io.github.USER/SERVER: {args.name!r}")
    installed = _installed(args.package)
    version = args.package_version or (installed or {}).get("version") or server.version
    if _RANGE.search(version):
        raise UsageError(f"the version must be one exact version, not {version!r}")
    description = _description(args, server, installed)
    document: dict[str, Any] = {"$schema": SCHEMA_URL, "name": args.name}
    document["description"] = description
    if getattr(server, "title", None):
        document["title"] = server.title[:100]
    document["version"] = version
    if args.repository:
        document["repository"] = _repository(args.repository)
    document["packages"] = [_package(args, version)]
    return document


def _installed(package: str) -> dict[str, str] | None:
    """The installed distribution's version and summary, if it is installed here."""
    from importlib import metadata

    try:
        found = metadata.metadata(package)
    except metadata.PackageNotFoundError:
        return None
    summary = str(found.json.get("summary", ""))
    return {"version": found["Version"], "summary": summary or ""}


def _description(args: argparse.Namespace, server: Any, installed: dict[str, str] | None) -> str:
    from mcpkit.cli.loading import UsageError

    text = args.description or (installed or {}).get("summary") or server.instructions or ""
    text = " ".join(text.split())
    if not text:
        raise UsageError("give --description (the package has no summary, the server none)")
    if len(text) > MAX_DESCRIPTION:
        raise UsageError(
            f"the registry takes at most {MAX_DESCRIPTION} characters of description "
            f"({len(text)} here): give a shorter --description"
        )
    return text


def _package(args: argparse.Namespace, version: str) -> dict[str, Any]:
    from mcpkit.cli.loading import UsageError

    transport: dict[str, Any] = {"type": args.transport}
    if args.transport == "streamable-http":
        if not args.url:
            raise UsageError(
                "--transport streamable-http needs --url (e.g. http://localhost:8000/mcp)"
            )
        transport["url"] = args.url
    elif args.url:
        raise UsageError("--url is for --transport streamable-http")
    package: dict[str, Any] = {
        "registryType": "pypi",
        "registryBaseUrl": "https://pypi.org",
        "identifier": args.package,
        "version": version,
        "runtimeHint": "uvx",
        "transport": transport,
    }
    if args.arg:
        package["packageArguments"] = [{"type": "positional", "value": a} for a in args.arg]
    variables = [_variable(v, secret=False) for v in args.env]
    variables += [_variable(v, secret=True) for v in args.secret_env]
    if variables:
        package["environmentVariables"] = variables
    return package


def _variable(given: str, *, secret: bool) -> dict[str, Any]:
    name, _, description = given.partition("=")
    variable: dict[str, Any] = {"name": name, "isRequired": True, "isSecret": secret}
    if description:
        variable["description"] = description
    return variable


def _repository(url: str) -> dict[str, str]:
    source = "gitlab" if "gitlab." in url else "github"
    return {"url": url, "source": source}
