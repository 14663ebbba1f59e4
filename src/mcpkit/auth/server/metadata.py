"""The server's RFC 8414 metadata, and the paths everything is served at.

Every endpoint hangs off the issuer's path (an issuer at the root serves /authorize, /token
and /register: the 2025-03-26 default endpoints). The metadata is at the RFC 8414 well-known
path with the issuer's path inserted, and, when `openid_configuration` is set, at the OpenID
Connect discovery paths too (insertion and appending) for clients that only look there; this
server issues no ID tokens, so it does not claim to be an OpenID Provider otherwise.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from mcpkit.auth.server.client_auth import ASSERTION_ALGORITHMS
from mcpkit.auth.server.options import AUTH_METHODS, GRANT_TYPES, AuthServerOptions
from mcpkit.auth.wellknown import OPENID_CONFIGURATION, authorization_server_metadata_path

ENDPOINTS = ("authorize", "token", "register", "revoke", "introspect", "jwks")


def endpoint_path(options: AuthServerOptions, name: str) -> str:
    return urlsplit(options.endpoint(name)).path


def metadata_paths(options: AuthServerOptions) -> tuple[str, ...]:
    paths = [authorization_server_metadata_path(options.issuer)]
    if options.openid_configuration:
        base = options.base_path
        paths.append(OPENID_CONFIGURATION + base)
        if base:
            paths.append(base + OPENID_CONFIGURATION)
    return tuple(paths)


def metadata_document(options: AuthServerOptions) -> dict[str, Any]:
    """The RFC 8414 document: issuer exactly as configured, S256 only, `iss` in responses."""
    with_secret = [m for m in AUTH_METHODS if m != "none"]
    document: dict[str, Any] = {
        "issuer": options.issuer,
        "authorization_endpoint": options.endpoint("authorize"),
        "token_endpoint": options.endpoint("token"),
        "jwks_uri": options.endpoint("jwks"),
        "revocation_endpoint": options.endpoint("revoke"),
        "introspection_endpoint": options.endpoint("introspect"),
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": list(GRANT_TYPES),
        "token_endpoint_auth_methods_supported": list(AUTH_METHODS),
        "token_endpoint_auth_signing_alg_values_supported": list(ASSERTION_ALGORITHMS),
        "revocation_endpoint_auth_methods_supported": list(AUTH_METHODS),
        "revocation_endpoint_auth_signing_alg_values_supported": list(ASSERTION_ALGORITHMS),
        "introspection_endpoint_auth_methods_supported": with_secret,
        "introspection_endpoint_auth_signing_alg_values_supported": list(ASSERTION_ALGORITHMS),
        "code_challenge_methods_supported": ["S256"],
        "authorization_response_iss_parameter_supported": True,
        "client_id_metadata_document_supported": options.cimd.enabled,
    }
    if options.registration:
        document["registration_endpoint"] = options.endpoint("register")
    if options.scopes:
        document["scopes_supported"] = list(options.scopes)
    return document
