"""What the HTTP app asks of authorization: who is calling, and may they do this.

The app knows nothing of OAuth. It is given an `Authenticator` (`mcpkit.auth.BearerAuth` is
one; a test or a deployment may bring its own) and asks it, for every request to the MCP
endpoint and the HTTP+SSE endpoints, for the verified `Principal` or the HTTP answer that
refuses the request (401 with its `WWW-Authenticate` challenge, 400, ...). It serves the
authenticator's Protected Resource Metadata at the paths it names. And before a request is
served, the scopes it needs (the server's `required_scopes`: per tool, resource, template or
prompt) are checked against the principal's: a caller without them gets the authenticator's
403 `insufficient_scope` answer, so the client can step up and retry.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Protocol

from mcpkit.protocol.http import Refusal
from mcpkit.protocol.jsonrpc import Parsed, Request
from mcpkit.runtime.principal import Principal

JSONObject = dict[str, Any]
# The scopes a request needs beyond those every request needs: (method, params) -> scopes.
RequiredScopes = Callable[[str, "JSONObject | None"], frozenset[str]]


class Authenticator(Protocol):
    def metadata_paths(self, endpoint_path: str) -> tuple[str, ...]:
        """Where to serve the Protected Resource Metadata of the endpoint at `endpoint_path`."""
        ...

    def metadata(self, scope: dict[str, Any]) -> bytes:
        """The Protected Resource Metadata document (JSON) for this request's server."""
        ...

    async def authenticate(
        self, scope: dict[str, Any], headers: dict[bytes, bytes]
    ) -> Principal | Refusal:
        """The verified caller, or the answer refusing the request. Must not raise for bad
        input (a missing, malformed or invalid token is a `Refusal`)."""
        ...

    def insufficient_scope(self, scope: dict[str, Any], needed: frozenset[str]) -> Refusal:
        """The 403 answer for a caller who lacks `needed` (all the scopes the request needs)."""
        ...


def missing_scopes(
    parsed: Parsed, principal: Principal, required: RequiredScopes
) -> frozenset[str] | None:
    """The scopes the requests of a POST body need (all of them, for the challenge), when
    `principal` lacks any; None when it may go on."""
    if type(parsed) is Request:  # the common case: one request, no set to build
        needed = required(parsed.method, parsed.params)
    else:
        needed = frozenset()
        items: Iterable[Any] = parsed if type(parsed) is list else ()
        for item in items:
            if type(item) is Request:
                needed |= required(item.method, item.params)
    if needed and not principal.has_scopes(needed):
        return needed
    return None
