"""A protected MCP server and its own authorization server, in one app on one port.

    python examples/oauth_server.py --port 8000 --dev-approve
    python examples/oauth_server.py --port 8000 --user alice:wonderland --db auth.sqlite3

The MCP endpoint is http://127.0.0.1:PORT/mcp (both protocol eras); every request needs a
bearer token issued by the authorization server at http://127.0.0.1:PORT (metadata at
/.well-known/oauth-authorization-server, the endpoint's own at
/.well-known/oauth-protected-resource/mcp). Clients register themselves (dynamic registration
or a client ID metadata document) and log in with the authorization code flow and PKCE.
`--dev-approve` approves every authorization at once and redirects straight back (no page),
so scripts and tests can run the whole flow headless; it is refused unless bound to loopback.
Otherwise people sign in on the consent page: `--user NAME:PASSWORD` adds one (without any,
a user `demo` with a fresh random password is made and the password printed).

Tools: `whoami` (any token for this server) and `audit_log` (needs the `admin` scope: a token
without it gets 403 insufficient_scope, and a client can step up).
"""

from __future__ import annotations

import argparse
import secrets
import sys

import uvicorn

from mcpkit import Context, Server
from mcpkit.auth.server import (
    AuthorizationServer,
    AuthServerOptions,
    MemoryAuthStore,
    PasswordUsers,
)

server = Server("oauth-demo", version="1.0.0", instructions="A server behind OAuth 2.1.")


@server.tool()
def whoami(ctx: Context) -> str:
    """Who the token says you are, and what it lets you do."""
    principal = ctx.principal
    if principal is None:
        return "nobody (no authorization)"
    return f"{principal.subject} via {principal.client_id}: {' '.join(sorted(principal.scopes))}"


@server.tool(scopes=["admin"])
def audit_log() -> list[str]:
    """The audit log (admins only)."""
    return ["2026-11-24 login alice", "2026-11-24 call whoami"]


def build(args: argparse.Namespace) -> object:
    """The ASGI app: the authorization server's paths, and the protected MCP endpoint."""
    base = f"http://{args.host}:{args.port}"
    resource = f"{base}/mcp"
    users = dict(pair.split(":", 1) for pair in args.user)
    authorization = AuthorizationServer(
        AuthServerOptions(
            issuer=base,
            store=MemoryAuthStore() if args.memory else args.db,
            scopes=("mcp", "admin"),
            default_scopes=("mcp",),
            resources=(resource,),
            default_resource=resource,
            authenticate=PasswordUsers.from_passwords(users) if users else None,
            dev_approve=args.dev_approve,
        )
    )
    auth = authorization.bearer_auth(resource, required_scopes=frozenset({"mcp"}))
    return authorization.mount(server.http_app(auth=auth, bind_host=args.host))


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--dev-approve", action="store_true", help="approve at once (loopback)")
    parser.add_argument("--user", action="append", default=[], metavar="NAME:PASSWORD")
    parser.add_argument("--db", default="mcpkit-auth.sqlite3", help="SQLite file for state")
    parser.add_argument("--memory", action="store_true", help="keep state in memory only")
    args = parser.parse_args(argv)
    if args.dev_approve and args.host not in ("127.0.0.1", "localhost", "::1"):
        parser.error("--dev-approve is only allowed when bound to a loopback address")
    if not args.dev_approve and not args.user:
        password = secrets.token_urlsafe(12)
        args.user = [f"demo:{password}"]
        print(f"sign in as demo / {password}", file=sys.stderr)
    if any(":" not in pair for pair in args.user):
        parser.error("--user takes NAME:PASSWORD")
    return args


def main(argv: list[str]) -> None:
    args = parse(argv)
    app = build(args)
    print(f"MCP endpoint: http://{args.host}:{args.port}/mcp", file=sys.stderr)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")  # type: ignore[arg-type]


if __name__ == "__main__":
    main(sys.argv[1:])
