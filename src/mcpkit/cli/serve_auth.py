"""Bearer tokens for a server `mcpkit run` / `mcpkit proxy` serves over HTTP.

--auth-token-env NAME    the tokens a caller may present, in environment variable NAME
                         (comma-separated: put a new one beside the old to rotate)
--auth-token-file PATH   ... or in a file, one per line (blank lines and `#` lines skipped)
--auth-resource URL      the endpoint's public URL, named in the 401 challenge's metadata
                         (default http://HOST:PORT/mcp)

Never a token on the command line: a process's arguments are readable by every local user
(`ps`), its environment and a file of mode 0600 (or a mounted Kubernetes Secret) are not.
The options name where the tokens are; each process reads them there (with `--workers N`
each worker reads them again: only the variable's name or the file's path travels).

Each token is a principal of its own, whose subject is `token:` and the first 16 hex digits
of the token's SHA-256 (stable when other tokens are added or removed, so a session stays
bound to the token that opened it; the token itself is never kept or shown). Bad input is a
UsageError that names the variable or the file, never a token.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
from typing import Any

__all__ = ["add_auth_options", "auth_keywords", "auth_source"]

_TOKEN = re.compile(r"[A-Za-z0-9\-._~+/]+=*")  # RFC 6750's b64token: what a header can carry


def add_auth_options(parser: argparse.ArgumentParser) -> None:
    tokens = parser.add_mutually_exclusive_group()
    tokens.add_argument(
        "--auth-token-env",
        metavar="NAME",
        help="HTTP: require a bearer token, one of those in $NAME (comma-separated)",
    )
    tokens.add_argument(
        "--auth-token-file",
        metavar="PATH",
        help="HTTP: require a bearer token, one of those in PATH (one per line)",
    )
    parser.add_argument(
        "--auth-resource",
        metavar="URL",
        help="HTTP, with a token option: the endpoint's public URL (default http://HOST:PORT/mcp)",
    )


def auth_source(args: argparse.Namespace) -> dict[str, str]:
    """Where the tokens are, as JSON values (empty: no auth). Raises UsageError for
    --auth-resource without a token option."""
    from mcpkit.cli.loading import UsageError

    source = {
        key: value
        for key in ("auth_token_env", "auth_token_file")
        if (value := getattr(args, key, None)) is not None
    }
    if not source:
        if getattr(args, "auth_resource", None) is not None:
            raise UsageError("--auth-resource needs --auth-token-env or --auth-token-file")
        return {}
    source["auth_resource"] = args.auth_resource or f"http://{_netloc(args.host, args.port)}/mcp"
    return source


def auth_keywords(source: dict[str, str]) -> dict[str, Any]:
    """`http_app`'s `auth=` for `auth_source`'s answer (nothing for an empty one). Raises
    UsageError when the tokens cannot be read or are not usable."""
    if not source:
        return {}
    from mcpkit.auth.resource import BearerAuth
    from mcpkit.auth.tokens import StaticTokenVerifier
    from mcpkit.cli.loading import UsageError
    from mcpkit.runtime.principal import Principal

    tokens = _tokens(source)
    verifier = StaticTokenVerifier({token: Principal(_subject(token)) for token in tokens})
    try:
        return {"auth": BearerAuth(verifier, source["auth_resource"])}
    except ValueError as exc:
        raise UsageError(f"--auth-resource: {exc}") from None


def _tokens(source: dict[str, str]) -> list[str]:
    from mcpkit.cli.loading import UsageError

    name = source.get("auth_token_env")
    if name is not None:
        where = f"${name} (--auth-token-env)"
        items = os.environ.get(name, "").split(",")
    else:
        path = source["auth_token_file"]
        where = f"{path} (--auth-token-file)"
        try:
            with open(path, encoding="utf-8") as file:
                lines = file.read().splitlines()
        except OSError as exc:
            raise UsageError(f"cannot read {where}: {exc.strerror}") from None
        except UnicodeDecodeError:
            raise UsageError(f"{where} is not UTF-8 text") from None
        items = [line for line in lines if not line.lstrip().startswith("#")]
    tokens = [item.strip() for item in items if item.strip()]
    if not tokens:
        raise UsageError(f"{where} holds no token")
    if not all(_TOKEN.fullmatch(token) for token in tokens):
        raise UsageError(
            f"{where}: a token may hold only letters, digits and -._~+/ (then = padding)"
        )
    return tokens


def _subject(token: str) -> str:
    return "token:" + hashlib.sha256(token.encode()).hexdigest()[:16]


def _netloc(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
