"""W8: the mcpkit `add` server over Streamable HTTP on uvicorn (one worker, asyncio loop,
httptools unless BENCH_UVICORN_HTTP=h11).

    python mcpkit_add_http.py MODE PORT     MODE: per-request | json | json+jwt | json+jwt-verify

per-request: the driver sends 2026-07-28 requests (no initialize, no session, the `_meta`
envelope on every request); json: the driver opens a 2025-11-25 session (initialize +
initialized, `Mcp-Session-Id`) and calls with it, the app answering JSON (W6's stateful JSON).
json+jwt (bench/auth_cost.py): json behind `auth=BearerAuth(JWTVerifier(...))`, RS256 tokens
checked against the key given in BENCH_JWT_PUBLIC_PEM, verified tokens remembered (the
default); json+jwt-verify: the same with no memory, every request's signature checked.
"""

import os
import sys

import uvicorn

from mcpkit import Server

server = Server("bench-add", version="1.0.0")

# uvicorn's HTTP parser, the same for every system: "httptools" (C, what uvicorn[standard] and
# mcpkit[http] install) or "h11" (pure Python).
HTTP_PARSER = os.environ.get("BENCH_UVICORN_HTTP", "httptools")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


if __name__ == "__main__":
    mode, port = sys.argv[1], int(sys.argv[2])
    options = {}
    if mode in ("json+jwt", "json+jwt-verify"):
        from bench_jwt import ISSUER, SCOPE, audience, public_pem

        from mcpkit.auth import BearerAuth, JWTVerifier

        verifier = JWTVerifier(
            issuer=ISSUER,
            audience=audience(port),
            keys=[public_pem()],
            cache_size=0 if mode == "json+jwt-verify" else 4096,
        )
        options["auth"] = BearerAuth(
            verifier=verifier, resource=audience(port), required_scopes={SCOPE}
        )
    elif mode not in ("per-request", "json"):
        modes = "per-request, json, json+jwt or json+jwt-verify"
        sys.exit(f"mcpkit_add_http.py: MODE is {modes}: {mode!r}")
    app = server.http_app(response_mode="json", **options)
    uvicorn.run(
        app, host="127.0.0.1", port=port, loop="asyncio", http=HTTP_PARSER, log_level="warning"
    )
