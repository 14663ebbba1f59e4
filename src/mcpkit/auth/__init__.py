"""OAuth 2.1 for MCP: the protected-resource side, an authorization server, and the client.

Optional (`pip install 'mcpkit[auth]'`): nothing here is imported by `import mcpkit`, and the
JOSE library (PyJWT) is imported only where a token is signed or verified.

- Protecting a server: `BearerAuth` (what `server.http_app(auth=...)` takes) with a token
  verifier: `JWTVerifier` (a JWKS URL or keys), `IntrospectionVerifier` (RFC 7662) or
  `StaticTokenVerifier`; see docs/auth.md.
- `mcpkit.auth.server`: an authorization server of our own (docs/authorization-server.md).
- `mcpkit.auth.pkce`, `mcpkit.auth.wellknown`: small pure helpers both sides share.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_LAZY = {
    "BearerAuth": "mcpkit.auth.resource",
    "InvalidToken": "mcpkit.auth.errors",
    "BearerOptions": "mcpkit.auth.resource",
    "IntrospectionVerifier": "mcpkit.auth.tokens",
    "JWTVerifier": "mcpkit.auth.tokens",
    "StaticTokenVerifier": "mcpkit.auth.tokens",
    "TokenVerifier": "mcpkit.auth.tokens",
}

if TYPE_CHECKING:
    from mcpkit.auth.errors import InvalidToken
    from mcpkit.auth.resource import BearerAuth, BearerOptions
    from mcpkit.auth.tokens import (
        IntrospectionVerifier,
        JWTVerifier,
        StaticTokenVerifier,
        TokenVerifier,
    )

__all__ = [
    "BearerAuth",
    "BearerOptions",
    "IntrospectionVerifier",
    "InvalidToken",
    "JWTVerifier",
    "StaticTokenVerifier",
    "TokenVerifier",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'mcpkit.auth' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
