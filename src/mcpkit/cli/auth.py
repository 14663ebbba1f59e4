"""OAuth on the command line: `mcpkit login URL`, `mcpkit logout URL`, and the credentials
every talking subcommand sends to a URL target.

For a URL target a subcommand sends `--token` (or `$MCPKIT_TOKEN`) as a bearer token when one
is given; otherwise it uses the tokens `mcpkit login` stored (in the user's config directory,
`FileStore`), refreshing them, and logs in when the server asks and none are usable, before
the first MCP request (so the time a person needs in the browser is not a request's timeout).
`--no-login` fails instead of logging in; `--headless` approves without a browser (servers that
approve at once: CI, tests). `--header "Name: value"` adds a header to every request (an
`Authorization` header is the credentials: no login then). A command line target gets its
credentials from its environment (`--env`), never from these options.
"""

from __future__ import annotations

import argparse
import os
import sys
import webbrowser
from typing import Any

TOKEN_VARIABLE = "MCPKIT_TOKEN"


def add_login_commands(commands: Any) -> None:
    """`login URL` and `logout URL`."""
    login = commands.add_parser("login", help="log in to an OAuth-protected server")
    login.add_argument("url", help="the MCP server's URL")
    login.add_argument("--headless", action="store_true", help="approve without a browser")
    login.add_argument("--scope", action="append", default=[], help="ask for this scope too")
    logout = commands.add_parser("logout", help="forget the tokens stored for a server")
    logout.add_argument("url", help="the MCP server's URL")


def add_credential_options(parser: argparse.ArgumentParser) -> None:
    """--token, --no-login, --headless for a talking subcommand."""
    parser.add_argument(
        "--token", help=f"bearer token for a URL target (default: ${TOKEN_VARIABLE})"
    )
    parser.add_argument(
        "--no-login", action="store_true", help="use stored tokens only; never log in"
    )
    parser.add_argument("--headless", action="store_true", help="log in without a browser")
    parser.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="'NAME: VALUE'",
        help="an HTTP header for a URL target (repeat for more)",
    )


def is_url(target: str) -> bool:
    return target.startswith(("http://", "https://"))


async def http_options(args: Any) -> Any:
    """The `HTTPOptions` for a talking subcommand's URL target (None for a command line).
    Raises UsageError for credentials given to a command line target, OAuthError when
    logging in fails."""
    from mcpkit.cli.loading import UsageError
    from mcpkit.client import HTTPOptions

    token = args.token or os.environ.get(TOKEN_VARIABLE)
    if not is_url(args.target):
        if args.token or args.header:
            raise UsageError(
                "--token and --header are for URL targets; a command gets its credentials "
                "from its environment (--env NAME=VALUE)"
            )
        return None
    headers = header_pairs(args.header)
    if token:
        headers["authorization"] = f"Bearer {token}"
    if "authorization" in headers:
        return HTTPOptions(headers=headers)
    oauth = oauth_client(headless=args.headless, login=not args.no_login)
    await oauth.prepare(args.target)
    return HTTPOptions(headers=headers or None, auth=oauth)


def header_pairs(items: list[str]) -> dict[str, str]:
    """`--header "Name: value"` items as a dict (names lower-cased). Raises UsageError."""
    from mcpkit.cli.loading import UsageError

    headers: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition(":")
        if not sep or not name.strip() or " " in name.strip():
            raise UsageError(f"--header expects 'Name: value', got {item!r}")
        headers[name.strip().lower()] = value.strip()
    return headers


async def login(args: Any) -> int:
    oauth = oauth_client(headless=args.headless, login=True, scopes=args.scope)
    tokens = await oauth.login(args.url)
    scope = f", scope {tokens.scope}" if tokens.scope else ""
    from mcpkit.host.visible import visible  # the issuer and scope are the server's words

    print(visible(f"Logged in to {args.url} (authorization server {tokens.issuer}{scope})"))
    return 0


def logout(args: Any) -> int:
    oauth = oauth_client(headless=True, login=False)
    known = oauth.tokens(args.url) is not None
    oauth.logout(args.url)
    print(f"Logged out of {args.url}" if known else f"No stored login for {args.url}")
    return 0


def oauth_client(*, headless: bool, login: bool, scopes: list[str] | None = None) -> Any:
    from mcpkit.auth.client import Browser, ClientMetadata, FileStore, Headless, OAuth

    approval = Headless() if headless else Browser(open=_open_browser)
    return OAuth(
        metadata=ClientMetadata(client_name="mcpkit CLI"),
        scopes=scopes or (),
        store=FileStore(),
        approval=approval,
        login=login,
    )


def _open_browser(url: str) -> None:
    print("Opening your browser to log in. If it does not open, visit:", file=sys.stderr)
    from mcpkit.host.visible import visible  # made of the authorization server's metadata

    print(visible(url), file=sys.stderr)
    webbrowser.open(url)
