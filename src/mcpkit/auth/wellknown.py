"""Where OAuth metadata lives, and what the canonical URI of a resource is.

Pure functions over URL strings, shared by the protected resource (which serves its metadata),
the authorization server (which serves its own) and the client (which looks for both, in the
order the MCP specification gives).
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

PROTECTED_RESOURCE = "/.well-known/oauth-protected-resource"
AUTHORIZATION_SERVER = "/.well-known/oauth-authorization-server"
OPENID_CONFIGURATION = "/.well-known/openid-configuration"


def canonical_resource(url: str) -> str:
    """The canonical URI of an MCP server (RFC 8707 / MCP): lowercase scheme and host, no
    fragment, no query, no trailing slash after a path (a bare origin keeps none either).

    Raises ValueError for a URL without an http(s) scheme and a host.
    """
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"not an absolute http(s) URL: {url!r}")
    netloc = parts.hostname.lower()
    if ":" in netloc:  # an IPv6 literal
        netloc = f"[{netloc}]"
    if parts.port is not None and parts.port != {"http": 80, "https": 443}[scheme]:
        netloc = f"{netloc}:{parts.port}"
    path = parts.path.rstrip("/")
    return urlunsplit((scheme, netloc, path, "", ""))


def _origin_and_path(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "", "", "")), parts.path.rstrip("/")


def protected_resource_metadata_urls(resource: str) -> list[str]:
    """RFC 9728 metadata URLs of an MCP endpoint, in the order a client tries them: the one
    for the endpoint's path, then the root one (only the root when the path is empty)."""
    origin, path = _origin_and_path(resource)
    urls = [f"{origin}{PROTECTED_RESOURCE}{path}"] if path else []
    urls.append(f"{origin}{PROTECTED_RESOURCE}")
    return urls


def protected_resource_metadata_path(endpoint_path: str) -> str:
    """The path a resource serves its metadata at, for an endpoint at `endpoint_path`."""
    return PROTECTED_RESOURCE + endpoint_path.rstrip("/")


def authorization_server_metadata_urls(issuer: str) -> list[str]:
    """Where an authorization server's metadata may be, in the order MCP clients try them:
    with a path component, RFC 8414 path insertion, OpenID Connect path insertion, then
    OpenID Connect path appending; without one, RFC 8414 then OpenID Connect."""
    origin, path = _origin_and_path(issuer)
    if not path:
        return [f"{origin}{AUTHORIZATION_SERVER}", f"{origin}{OPENID_CONFIGURATION}"]
    return [
        f"{origin}{AUTHORIZATION_SERVER}{path}",
        f"{origin}{OPENID_CONFIGURATION}{path}",
        f"{origin}{path}{OPENID_CONFIGURATION}",
    ]


def authorization_server_metadata_path(issuer: str) -> str:
    """The path an authorization server serves its RFC 8414 metadata at (path insertion)."""
    _, path = _origin_and_path(issuer)
    return AUTHORIZATION_SERVER + path
