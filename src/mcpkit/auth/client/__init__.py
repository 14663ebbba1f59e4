"""The OAuth 2.1 client for MCP servers: an `httpx.Auth` that logs in, keeps and refreshes tokens.

    from mcpkit import Client
    from mcpkit.auth.client import OAuth
    from mcpkit.client import HTTPOptions

    async with Client(url, http=HTTPOptions(auth=OAuth())) as client: ...

Modules: `flow` (`OAuth`, the httpx.Auth), `challenge` (WWW-Authenticate), `discovery`
(resource and authorization server metadata), `registration` (pre-registered, client metadata
documents, dynamic registration), `authorize` (the authorization request and the checks on its
response), `token_endpoint` (client authentication and grants), `approval` and `loopback`
(how the user approves), `assertions` (the jwt_bearer grant), `store` (where tokens live),
`records`, `config`, `errors`.
"""

from typing import TYPE_CHECKING, Any

from mcpkit._renamed import renamed
from mcpkit.auth.client.approval import Approver, Browser, Callback, Headless
from mcpkit.auth.client.assertions import IdJagExchange
from mcpkit.auth.client.config import ClientCredentials, ClientMetadata
from mcpkit.auth.client.errors import OAuthError
from mcpkit.auth.client.flow import OAuth
from mcpkit.auth.client.records import Registration, Tokens
from mcpkit.auth.client.store import FileStore, KeyringStore, MemoryTokenStore, TokenStore

__all__ = [
    "Approver",
    "Browser",
    "Callback",
    "ClientCredentials",
    "ClientMetadata",
    "FileStore",
    "Headless",
    "IdJagExchange",
    "KeyringStore",
    "MemoryTokenStore",
    "OAuth",
    "OAuthError",
    "Registration",
    "TokenStore",
    "Tokens",
]

# Old spellings, answered for one release with a DeprecationWarning (issue 23): both named
# classes of other packages (mcpkit.auth.server's store, mcpkit.host's consent answer).
_RENAMED = {"MemoryStore": "MemoryTokenStore", "Approval": "Approver"}

# Hidden from type checkers: a typo in `from ... import` stays an error there, and so does
# an old spelling (it works at run time, with its warning).
if not TYPE_CHECKING:

    def __getattr__(name: str) -> Any:
        return globals()[renamed(__name__, name, _RENAMED)]
