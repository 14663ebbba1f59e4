"""Finding the authorization server of an MCP server, and what it can do.

How this works: `discover(http, server_url, challenge)` fetches the Protected Resource
Metadata (RFC 9728) from the challenge's `resource_metadata` URL, else from the well-known
URIs for the endpoint's path and then the root; checks that its `resource` names this server
(same origin, and the server's path at or below the resource's path); takes the first of its
`authorization_servers`; and fetches that server's metadata from the RFC 8414 / OpenID
Connect well-known URLs in the order MCP gives, accepting a document only when its `issuer` is
identical to the issuer the URL was built from. A server without resource metadata is a
2025-03-26 server: its own origin is the authorization server, whose metadata lives at the
root (its issuer must be on that origin), and without metadata the default endpoints
`/authorize`, `/token` and `/register` apply.

The result, `AuthServer`, records the issuer the authorization response is checked against
(RFC 9207) and the `resource` value to send (RFC 8707): the resource metadata's own, as
published, or the server's canonical URI when there is none.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

from mcpkit.auth.client.challenge import Challenge
from mcpkit.auth.client.errors import OAuthError, requesting
from mcpkit.auth.client.wire import printable, strings
from mcpkit.auth.untrusted_json import loads
from mcpkit.auth.wellknown import (
    authorization_server_metadata_urls,
    canonical_resource,
    protected_resource_metadata_urls,
)

logger = logging.getLogger("mcpkit.auth.client")
JSONObject = dict[str, Any]
MAX_METADATA_BYTES = 256 * 1024


@dataclass(frozen=True, slots=True)
class AuthServer:
    """An authorization server as discovered for one MCP server."""

    issuer: str
    resource: str  # the `resource` parameter (RFC 8707) for this MCP server
    authorization_endpoint: str | None
    token_endpoint: str
    registration_endpoint: str | None = None
    resource_scopes: tuple[str, ...] | None = None  # the resource metadata's scopes_supported
    scopes_supported: tuple[str, ...] | None = None  # the authorization server's
    iss_parameter_supported: bool = False
    client_id_metadata_document_supported: bool = False
    auth_methods_supported: tuple[str, ...] = ("client_secret_basic",)  # RFC 8414 default
    code_challenge_methods: tuple[str, ...] = ()
    grant_types_supported: tuple[str, ...] = ("authorization_code", "implicit")
    dpop_algorithms: tuple[str, ...] = ()  # dpop_signing_alg_values_supported (RFC 9449)
    from_metadata: bool = True  # False: the 2025-03-26 default endpoints, no metadata found

    def supports_s256(self) -> bool:
        return "S256" in self.code_challenge_methods


async def discover(http: httpx.AsyncClient, server_url: str, challenge: Challenge) -> AuthServer:
    """The authorization server for the MCP server at `server_url`.

    Raises OAuthError (step "discovery") when resource metadata names another resource, names
    no authorization server, or no usable authorization server metadata is found.
    """
    resource = await _resource_metadata(http, server_url, challenge)
    if resource is None:
        return await _legacy(http, server_url)
    metadata_url, document = resource
    published = _check_resource(document, server_url, metadata_url)
    issuers = document.get("authorization_servers")
    if not isinstance(issuers, list) or not issuers or not isinstance(issuers[0], str):
        raise OAuthError(
            "discovery", metadata_url, "the resource metadata names no authorization server"
        )
    issuer = issuers[0]
    metadata = await _server_metadata(http, issuer)
    if metadata is None:
        raise OAuthError(
            "discovery", issuer, "no authorization server metadata found at its well-known URLs"
        )
    return _from_metadata(metadata, published, strings(document.get("scopes_supported")))


async def _resource_metadata(
    http: httpx.AsyncClient, server_url: str, challenge: Challenge
) -> tuple[str, JSONObject] | None:
    """(URL, document) of the first resource metadata found, in the spec's order."""
    candidates = protected_resource_metadata_urls(server_url)
    if challenge.resource_metadata:
        candidates.insert(0, challenge.resource_metadata)
    for url in candidates:
        document = await _fetch_json(http, url)
        if document is not None:
            return url, document
    return None


def _check_resource(document: JSONObject, server_url: str, metadata_url: str) -> str:
    """The resource metadata's `resource`, when it names this MCP server; else OAuthError."""
    published = document.get("resource")
    if not isinstance(published, str):
        raise OAuthError("discovery", metadata_url, "the resource metadata has no `resource`")
    if not resource_covers(published, server_url):
        raise OAuthError(
            "discovery",
            metadata_url,
            f"the resource metadata is for {printable(published)}, not for {server_url}: refusing "
            "to authorize (a token for another resource must not be requested here)",
        )
    return published


def resource_covers(resource: str, server_url: str) -> bool:
    """Whether protected resource `resource` includes the MCP server at `server_url`: same
    scheme, host and port, and the server's path is the resource's path or below it."""
    try:
        ours, theirs = canonical_resource(server_url), canonical_resource(resource)
    except ValueError:
        return False
    mine, other = urlsplit(ours), urlsplit(theirs)
    if (mine.scheme, mine.netloc) != (other.scheme, other.netloc):
        return False
    return mine.path == other.path or mine.path.startswith(other.path.rstrip("/") + "/")


async def _server_metadata(
    http: httpx.AsyncClient, issuer: str, *, same_origin: bool = False
) -> JSONObject | None:
    """The authorization server metadata whose `issuer` is exactly `issuer`, or None.

    A document with another issuer is refused (RFC 8414 section 3.3): it cannot be used, and
    since a server publishes one document under several names, none found is an error above.
    `same_origin` (2025-03-26 servers, whose metadata sits at the MCP server's own root and
    whose issuer was never named by anyone else) accepts an issuer on the same origin.
    """
    try:
        urls = authorization_server_metadata_urls(issuer)
    except ValueError:
        raise OAuthError("discovery", printable(issuer), "not an http(s) issuer URL") from None
    for url in urls:
        document = await _fetch_json(http, url)
        if document is None:
            continue
        named = document.get("issuer")
        if named != issuer and not (same_origin and _same_origin(named, issuer)):
            raise OAuthError(
                "discovery",
                url,
                f"the metadata's issuer {printable(named)} is not {issuer}, the "
                "issuer it was fetched for: refusing to use it (RFC 8414 section 3.3)",
            )
        return document
    return None


def _from_metadata(
    metadata: JSONObject, resource: str, resource_scopes: tuple[str, ...] | None
) -> AuthServer:
    issuer = str(metadata["issuer"])
    token_endpoint = metadata.get("token_endpoint")
    if not isinstance(token_endpoint, str):
        raise OAuthError(
            "discovery", issuer, "the authorization server metadata has no token_endpoint"
        )
    authorization_endpoint = metadata.get("authorization_endpoint")
    registration_endpoint = metadata.get("registration_endpoint")
    return AuthServer(
        issuer=issuer,
        resource=resource,
        authorization_endpoint=authorization_endpoint
        if isinstance(authorization_endpoint, str)
        else None,
        token_endpoint=token_endpoint,
        registration_endpoint=registration_endpoint
        if isinstance(registration_endpoint, str)
        else None,
        resource_scopes=resource_scopes,
        scopes_supported=strings(metadata.get("scopes_supported")),
        iss_parameter_supported=metadata.get("authorization_response_iss_parameter_supported")
        is True,
        client_id_metadata_document_supported=metadata.get("client_id_metadata_document_supported")
        is True,
        auth_methods_supported=strings(metadata.get("token_endpoint_auth_methods_supported"))
        or ("client_secret_basic",),
        code_challenge_methods=strings(metadata.get("code_challenge_methods_supported")) or (),
        grant_types_supported=strings(metadata.get("grant_types_supported"))
        or ("authorization_code", "implicit"),
        dpop_algorithms=strings(metadata.get("dpop_signing_alg_values_supported")) or (),
    )


async def _legacy(http: httpx.AsyncClient, server_url: str) -> AuthServer:
    """2025-03-26: no resource metadata; the server's origin is the authorization server."""
    parts = urlsplit(server_url)
    origin = f"{parts.scheme}://{parts.netloc}"
    resource = canonical_resource(server_url)
    logger.info(
        "%s has no resource metadata: using %s as its authorization server", server_url, origin
    )
    metadata = await _server_metadata(http, origin, same_origin=True)
    if metadata is not None:
        return _from_metadata(metadata, resource, None)
    logger.info("%s has no authorization server metadata: using the default endpoints", origin)
    return AuthServer(
        issuer=origin,
        resource=resource,
        authorization_endpoint=f"{origin}/authorize",
        token_endpoint=f"{origin}/token",
        registration_endpoint=f"{origin}/register",
        auth_methods_supported=("client_secret_basic", "client_secret_post", "none"),
        code_challenge_methods=("S256",),  # 2025-03-26: PKCE is mandatory, nothing to read
        grant_types_supported=("authorization_code", "refresh_token"),
        from_metadata=False,
    )


def _same_origin(url: Any, origin: str) -> bool:
    if not isinstance(url, str):
        return False
    a, b = urlsplit(url), urlsplit(origin)
    return (a.scheme, a.netloc) == (b.scheme, b.netloc)


async def _fetch_json(http: httpx.AsyncClient, url: str) -> JSONObject | None:
    """A JSON object from `url`, or None when it is not there (any non-200, not JSON)."""
    try:
        response = await http.get(url, headers={"accept": "application/json"})
    except httpx.HTTPError as exc:
        logger.debug("GET %s failed: %s", url, type(exc).__name__)
        return None
    if response.status_code != 200 or len(response.content) > MAX_METADATA_BYTES:
        return None
    try:
        document = loads(response.content)
    except ValueError:  # not JSON, or nested too deep
        return None
    return document if isinstance(document, dict) else None


async def probe_challenge(
    http: httpx.AsyncClient, server_url: str, *, unreachable: bool = False
) -> Challenge | None:
    """The challenge an unauthenticated request meets (a JSON-RPC ping, harmless anywhere);
    None when the server does not refuse it, or, when `unreachable` is true, when nothing
    listens there (the client's own connection then says so, not an authorization error).
    Raises OAuthError when it does not answer."""
    with requesting("discovery", server_url, "the server did not answer"):
        try:
            response = await http.post(
                server_url,
                json={"jsonrpc": "2.0", "id": 0, "method": "ping"},
                headers={"accept": "application/json, text/event-stream"},
            )
        except httpx.ConnectError:
            if unreachable:
                return None
            raise
    if response.status_code not in (401, 403):
        return None
    return Challenge.parse(response.headers.get_list("www-authenticate"))
