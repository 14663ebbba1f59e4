"""mcpkit's OAuth 2.1 authorization server, run on its own with uvicorn.

    python examples/authorization_server.py --port 9000 --user alice:wonderland --scope mcp
    python examples/authorization_server.py --port 9000 --dev-approve \
        --client my-app=http://127.0.0.1/callback

The issuer is http://HOST:PORT unless --issuer says otherwise (behind a TLS proxy, give the
public https URL). State (registered clients, refresh tokens, signing keys) is kept in the
SQLite file --db; --memory keeps it in memory instead. --dev-approve approves every
authorization at once with a redirect straight back (no page), for scripts and tests, and is
refused unless the server is bound to a loopback address. See docs/authorization-server.md.
"""

from __future__ import annotations

import argparse
import sys

import uvicorn

from mcpkit.auth.server import (
    AuthorizationServer,
    AuthServerOptions,
    CIMDOptions,
    ClientConfig,
    MemoryAuthStore,
    PasswordUsers,
)
from mcpkit.auth.server.options import is_loopback
from mcpkit.auth.wellknown import authorization_server_metadata_urls


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9000)
    parser.add_argument("--issuer", help="public issuer URL (default http://HOST:PORT)")
    parser.add_argument("--db", default="mcpkit-auth.sqlite3", help="SQLite file for state")
    parser.add_argument("--memory", action="store_true", help="keep state in memory only")
    parser.add_argument("--dev-approve", action="store_true", help="approve at once (loopback)")
    parser.add_argument("--user", action="append", default=[], metavar="NAME:PASSWORD")
    parser.add_argument(
        "--client",
        action="append",
        default=[],
        metavar="ID=REDIRECT_URI",
        help="pre-register a public client",
    )
    parser.add_argument("--scope", action="append", default=[], help="a scope to grant")
    parser.add_argument(
        "--resource",
        action="append",
        default=[],
        help="a resource to issue tokens for (the first is the default)",
    )
    parser.add_argument(
        "--cimd-allow-network",
        action="append",
        default=[],
        metavar="CIDR",
        help="allow metadata documents there, over http too (development)",
    )
    args = parser.parse_args(argv)
    if args.dev_approve and not is_loopback(args.host):
        parser.error("--dev-approve is only allowed when bound to a loopback address")
    for pair in (*args.user, *args.client):
        if ":" not in pair and "=" not in pair:
            parser.error(f"malformed value: {pair!r}")
    return args


def options_from(args: argparse.Namespace) -> AuthServerOptions:
    users = dict(pair.split(":", 1) for pair in args.user)
    clients = []
    for pair in args.client:
        client_id, redirect_uri = pair.split("=", 1)
        clients.append(ClientConfig(client_id, redirect_uris=(redirect_uri,)))
    host = f"[{args.host}]" if ":" in args.host else args.host
    return AuthServerOptions(
        issuer=args.issuer or f"http://{host}:{args.port}",
        store=MemoryAuthStore() if args.memory else args.db,
        scopes=tuple(args.scope),
        default_scopes=tuple(args.scope),
        resources=tuple(args.resource),
        default_resource=args.resource[0] if args.resource else None,
        clients=tuple(clients),
        authenticate=PasswordUsers.from_passwords(users) if users else None,
        dev_approve=args.dev_approve,
        cimd=CIMDOptions(
            allowed_networks=tuple(args.cimd_allow_network),
            allow_http=bool(args.cimd_allow_network),
        ),
    )


def main(argv: list[str]) -> None:
    args = parse(argv)
    try:
        server = AuthorizationServer(options_from(args))
    except ValueError as exc:
        sys.exit(f"authorization_server: {exc}")
    metadata = authorization_server_metadata_urls(server.options.issuer)[0]
    print(f"issuer {server.options.issuer}; metadata at {metadata}", flush=True)
    uvicorn.run(server, host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main(sys.argv[1:])
