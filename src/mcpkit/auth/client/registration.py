"""Getting a client id at an authorization server, in the order MCP gives.

1. Pre-registered credentials (`ClientCredentials`), when given; bound to their `issuer`
   when they name one (presenting them to another server is refused).
2. A registration remembered from before for this issuer (dynamic registration), while its
   secret has not expired and it lists the redirect URI in use.
3. A Client ID Metadata Document: the client id is the https URL of the document, when the
   authorization server says it supports them.
4. Dynamic Client Registration (RFC 7591) at the server's `registration_endpoint`, asking
   for the token endpoint authentication the server supports (`none` first: a native client
   keeps no secret), with `application_type` and the `refresh_token` grant.

The choice of authentication for given credentials: `private_key_jwt` with a key; with a
secret, `client_secret_basic` unless the server lists only `client_secret_post`; else `none`.
"""

from __future__ import annotations

import logging
from typing import Any

import httpx

from mcpkit.auth.client.config import ClientCredentials, ClientMetadata
from mcpkit.auth.client.discovery import AuthServer
from mcpkit.auth.client.errors import OAuthError, requesting
from mcpkit.auth.client.records import Registration
from mcpkit.auth.client.wire import json_object, strings, text

logger = logging.getLogger("mcpkit.auth.client")
JSONObject = dict[str, Any]


def preregistered(credentials: ClientCredentials, server: AuthServer) -> Registration:
    """The pre-registered client at `server`. Raises OAuthError when the credentials are
    bound to another authorization server."""
    if credentials.issuer is not None and credentials.issuer != server.issuer:
        raise OAuthError(
            "registration",
            server.issuer,
            f"the pre-registered client is registered with {credentials.issuer}, but the "
            "server's resource metadata now names this authorization server; its credentials "
            "are not presented here (register the client with it, or update the credentials)",
        )
    return Registration(
        client_id=credentials.client_id,
        issuer=server.issuer,
        auth_method=credentials.auth_method or _method_for(credentials, server),
        client_secret=credentials.client_secret,
    )


def _method_for(credentials: ClientCredentials, server: AuthServer) -> str:
    if credentials.private_key is not None:
        return "private_key_jwt"
    if credentials.client_secret is None:
        return "none"
    supported = server.auth_methods_supported
    if "client_secret_basic" not in supported and "client_secret_post" in supported:
        return "client_secret_post"
    return "client_secret_basic"


def metadata_document(
    metadata: ClientMetadata, server: AuthServer, redirect_uri: str
) -> Registration | None:
    """The Client ID Metadata Document client, when we have a document and the server
    supports them."""
    if metadata.metadata_url is None or not server.client_id_metadata_document_supported:
        return None
    return Registration(
        client_id=metadata.metadata_url, issuer=server.issuer, redirect_uris=(redirect_uri,)
    )


async def register(
    http: httpx.AsyncClient, metadata: ClientMetadata, server: AuthServer, redirect_uri: str
) -> Registration:
    """Dynamic Client Registration. Raises OAuthError (step "registration")."""
    url = server.registration_endpoint
    if url is None:
        raise OAuthError(
            "registration",
            server.issuer,
            "the authorization server supports neither dynamic client registration nor client "
            "metadata documents (for this client); give pre-registered ClientCredentials",
        )
    method = _public_method(server)
    body: JSONObject = {
        "client_name": metadata.client_name,
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": method,
        "application_type": metadata.application_type,
    }
    if metadata.client_uri:
        body["client_uri"] = metadata.client_uri
    with requesting("registration", url):
        response = await http.post(url, json=body, headers={"accept": "application/json"})
    answer = json_object(response)
    if response.status_code not in (200, 201) or not isinstance(answer.get("client_id"), str):
        raise OAuthError.answered(
            "registration",
            url,
            f"HTTP {response.status_code}, no client_id",
            answer,
        )
    secret = text(answer.get("client_secret"))
    granted_method = text(answer.get("token_endpoint_auth_method"))
    if granted_method is None:
        granted_method = method if secret is None or method != "none" else "client_secret_basic"
    expires = answer.get("client_secret_expires_at")
    logger.info("registered client %s at %s", answer["client_id"], server.issuer)
    return Registration(
        client_id=answer["client_id"],
        issuer=server.issuer,
        auth_method=granted_method,
        client_secret=secret,
        redirect_uris=tuple(strings(answer.get("redirect_uris")) or (redirect_uri,)),
        secret_expires_at=float(expires) if isinstance(expires, int | float) else None,
    )


def _public_method(server: AuthServer) -> str:
    supported = server.auth_methods_supported
    for method in ("none", "client_secret_basic", "client_secret_post"):
        if method in supported:
            return method
    return "none"
