"""The JWT setup shared by the protected `add` servers and bench/auth_cost.py.

The driver makes an RSA key, hands its public half to the server in BENCH_JWT_PUBLIC_PEM and
signs one RS256 access token per connection (issuer ISSUER, audience the server's /mcp URL,
scope "mcp"). RS256 because it is what most identity providers sign with.
"""

import os

ISSUER = "https://login.bench.example"
SCOPE = "mcp"


def audience(port: int) -> str:
    return f"http://127.0.0.1:{port}/mcp"


def public_pem() -> str:
    pem = os.environ.get("BENCH_JWT_PUBLIC_PEM")
    if not pem:
        raise SystemExit("BENCH_JWT_PUBLIC_PEM is not set (bench/auth_cost.py sets it)")
    return pem
