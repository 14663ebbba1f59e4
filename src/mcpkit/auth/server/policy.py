"""What a request may be granted: its scopes and its audience (the RFC 8707 resource).

Shared by the authorization endpoint (at consent) and the token endpoint (client_credentials,
and the narrowing a token request may ask for). Failures are the RFC's errors:
invalid_scope (RFC 6749 section 5.2) and invalid_target (RFC 8707 section 2).
"""

from __future__ import annotations

from urllib.parse import urlsplit

from mcpkit.auth.server.asgi import OAuthErrorResponse
from mcpkit.auth.server.clients import OAuthClient
from mcpkit.auth.server.options import AuthServerOptions
from mcpkit.auth.wellknown import canonical_resource

MAX_SCOPES = 50


def granted_scopes(
    options: AuthServerOptions,
    client: OAuthClient,
    requested: str | None,
    *,
    consented: bool = False,
) -> tuple[str, ...]:
    """The scopes to grant for `requested` (space-separated; None: the defaults). Raises
    OAuthErrorResponse (invalid_scope) for a scope the server does not grant (`options.scopes`) or
    this client may not have.

    `consented`: a person approves these scopes on the consent page. Then the `scope` a
    client registered for itself (dynamically or in its metadata document) is no ceiling:
    it is only what the client first thought it needed, it could register again with more,
    and clients step up by asking for more at the next authorization without registering
    again (the official SDK and FastMCP do). A scope set by the operator
    (`ClientConfig.scope`) stays a ceiling, and so does every registered scope where no
    person approves (client_credentials)."""
    ceiling = client.scopes if client.kind == "configured" or not consented else None
    if requested is None:
        defaults = options.default_scopes
        return tuple(s for s in defaults if client.scopes is None or s in client.scopes)
    asked = tuple(dict.fromkeys(requested.split(" ")))
    if "" in asked or len(asked) > MAX_SCOPES:
        raise OAuthErrorResponse("invalid_scope", "scope must be space-separated scope names")
    for scope in asked:
        if (options.scopes and scope not in options.scopes) or (
            ceiling is not None and scope not in ceiling
        ):
            raise OAuthErrorResponse("invalid_scope", f"scope not available: {scope[:64]}")
    return asked


def narrowed_scopes(granted: tuple[str, ...], requested: str | None) -> tuple[str, ...]:
    """A token request's `scope`, which may only narrow what was granted. Raises OAuthErrorResponse
    (invalid_scope) when it asks for more."""
    if requested is None:
        return granted
    asked = tuple(dict.fromkeys(requested.split()))
    if not set(asked) <= set(granted):
        raise OAuthErrorResponse("invalid_scope", "scope exceeds what was granted")
    return asked


def audience(options: AuthServerOptions, resources: tuple[str, ...]) -> str:
    """The audience of a token for the `resource` parameters given (none: the default
    resource, else the issuer). http(s) resources are written in canonical form. Raises
    OAuthErrorResponse (invalid_target) for more than one resource, one that is not an absolute URI
    or has a fragment, or one the server does not issue tokens for."""
    if not resources:
        return options.default_resource or options.issuer
    if len(resources) > 1:
        raise OAuthErrorResponse("invalid_target", "one resource per request")
    resource = resources[0]
    parts = urlsplit(resource)
    if not parts.scheme or "#" in resource or len(resource) > 2000:
        raise OAuthErrorResponse(
            "invalid_target", "resource must be an absolute URI without a fragment"
        )
    if parts.scheme in ("http", "https"):
        try:
            resource = canonical_resource(resource)
        except ValueError:
            raise OAuthErrorResponse("invalid_target", "resource must be an absolute URI") from None
    allowed = {_canonical(r) for r in options.resources}
    if allowed and resource not in allowed:
        raise OAuthErrorResponse("invalid_target", "this server issues no tokens for that resource")
    return resource


def _canonical(resource: str) -> str:
    if resource.startswith(("http://", "https://")):
        return canonical_resource(resource)
    return resource
