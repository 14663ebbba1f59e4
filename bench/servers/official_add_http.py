"""W8: the official SDK's (mcp==2.3.0) `add` server over Streamable HTTP on uvicorn (one worker,
asyncio loop, httptools unless BENCH_UVICORN_HTTP=h11). Run with bench/.venv-official/bin/python.

    python official_add_http.py MODE PORT     MODE: per-request | json | json+jwt-verify

MCPServer has no separate per-request app: `streamable_http_app()` routes a POST whose
`MCP-Protocol-Version` header is not a handshake-era version (here 2026-07-28) to its
single-exchange entry (`mcp.server._streamable_http_modern.handle_modern_request`), no session
and no initialize. `json_response=True` answers it in the ASGI task as `application/json` (the
default SSE mode runs the handler in a sibling task and still answers JSON when it sends
nothing first). `stateless_http` only affects handshake-era requests.

json (bench/auth_cost.py): a 2025-11-25 session answering JSON; json+jwt-verify: the same
behind the SDK's bearer middleware (`auth=AuthSettings`, `token_verifier=`) with a verifier
that checks each RS256 token with PyJWT against the key in BENCH_JWT_PUBLIC_PEM, as its docs
suggest writing one (the SDK keeps no memory of verified tokens).
"""

import os
import sys

import uvicorn
from mcp.server.mcpserver import MCPServer


def protected_options(port: int) -> dict:
    """MCPServer arguments for json+jwt-verify: AuthSettings and a PyJWT token verifier."""
    import jwt
    from bench_jwt import ISSUER, SCOPE, audience, public_pem
    from cryptography.hazmat.primitives.serialization import load_pem_public_key
    from mcp.server.auth.provider import AccessToken
    from mcp.server.auth.settings import AuthSettings

    key = load_pem_public_key(public_pem().encode())  # parsed once, as a JWKS cache would

    class JWTVerifier:
        async def verify_token(self, token: str) -> AccessToken | None:
            try:
                claims = jwt.decode(
                    token, key, algorithms=["RS256"], audience=audience(port), issuer=ISSUER
                )
            except jwt.InvalidTokenError:
                return None
            return AccessToken(
                token=token,
                client_id=claims.get("client_id", claims["sub"]),
                scopes=claims.get("scope", "").split(),
                expires_at=claims.get("exp"),
                resource=audience(port),
                subject=claims["sub"],
            )

    settings = AuthSettings(
        issuer_url=ISSUER,
        resource_server_url=audience(port),
        required_scopes=[SCOPE],
        validate_token_resource=False,  # the verifier checks the audience itself
    )
    return {"auth": settings, "token_verifier": JWTVerifier()}


mode, port = (sys.argv[1], int(sys.argv[2])) if __name__ == "__main__" else ("per-request", 0)
server = MCPServer(
    "bench-add", version="1.0.0", **(protected_options(port) if mode.endswith("jwt-verify") else {})
)

# uvicorn's HTTP parser, the same for every system: "httptools" (C, what uvicorn[standard] and
# mcpkit[http] install) or "h11" (pure Python).
HTTP_PARSER = os.environ.get("BENCH_UVICORN_HTTP", "httptools")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


if __name__ == "__main__":
    if mode not in ("per-request", "json", "json+jwt-verify"):
        modes = "per-request, json or json+jwt-verify"
        sys.exit(f"official_add_http.py: MODE is {modes}, not {mode!r}")
    app = server.streamable_http_app(json_response=True, stateless_http=mode == "per-request")
    uvicorn.run(
        app, host="127.0.0.1", port=port, loop="asyncio", http=HTTP_PARSER, log_level="warning"
    )
