"""mcpkit's own OAuth 2.1 authorization server, as a pure ASGI app.

    from mcpkit.auth.server import AuthorizationServer, AuthServerOptions, PasswordUsers

    server = AuthorizationServer(AuthServerOptions(
        issuer="https://auth.example.com",
        authenticate=PasswordUsers.from_passwords({"alice": "correct horse"}),
        scopes=("mcp",),
    ))
    # `server` is the ASGI app; `server.paths` the paths it answers.

See docs/authorization-server.md. Names resolve lazily; PyJWT is imported only when a token
is signed or verified.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from mcpkit._renamed import renamed

_LAZY = {
    "AuthorizationServer": "mcpkit.auth.server.app",
    "AuthServerOptions": "mcpkit.auth.server.options",
    "ClientConfig": "mcpkit.auth.server.options",
    "CIMDOptions": "mcpkit.auth.server.options",
    "Rate": "mcpkit.auth.server.limits",
    "RateLimits": "mcpkit.auth.server.limits",
    "LoginAttempt": "mcpkit.auth.server.users",
    "PasswordUsers": "mcpkit.auth.server.users",
    "hash_password": "mcpkit.auth.server.users",
    "AuthStore": "mcpkit.auth.server.store",
    "MemoryAuthStore": "mcpkit.auth.server.memory_store",
    "SQLiteStore": "mcpkit.auth.server.sqlite_store",
}

if TYPE_CHECKING:
    from mcpkit.auth.server.app import AuthorizationServer
    from mcpkit.auth.server.limits import Rate, RateLimits
    from mcpkit.auth.server.memory_store import MemoryAuthStore
    from mcpkit.auth.server.options import AuthServerOptions, CIMDOptions, ClientConfig
    from mcpkit.auth.server.sqlite_store import SQLiteStore
    from mcpkit.auth.server.store import AuthStore
    from mcpkit.auth.server.users import LoginAttempt, PasswordUsers, hash_password

__all__ = [
    "AuthServerOptions",
    "AuthStore",
    "AuthorizationServer",
    "CIMDOptions",
    "ClientConfig",
    "LoginAttempt",
    "MemoryAuthStore",
    "PasswordUsers",
    "Rate",
    "RateLimits",
    "SQLiteStore",
    "hash_password",
]


# Old spellings, answered for one release with a DeprecationWarning (issue 23): `MemoryStore`
# also named mcpkit.auth.client's token store.
_RENAMED = {"MemoryStore": "MemoryAuthStore"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        return __getattr__(renamed(__name__, name, _RENAMED))
    return getattr(importlib.import_module(module), name)
