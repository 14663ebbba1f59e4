"""Redirect URIs: which may be registered, which match, and how a response is added to one.

The rules (OAuth 2.1 sections 2.3 and 7.12, MCP security considerations): an absolute https
URI, or http on a loopback host (127.0.0.1, [::1], localhost); no fragment, no user info, no
wildcard, nothing but those two schemes (so never `javascript:` or `data:`). A request's
redirect URI matches a registered one exactly, string for string, with one exception from
RFC 8252 section 7.3: for a loopback http URI the port may differ, since a native app gets
its port from the system at each run.
"""

from __future__ import annotations

import re
from urllib.parse import urlencode, urlsplit, urlunsplit

LOOPBACK_HOSTS = ("127.0.0.1", "::1", "localhost")
_HOST = re.compile(r"[a-z0-9.-]+|[0-9a-f:.]+")  # a DNS name or IP address, as urlsplit gives it
MAX_LENGTH = 2000


def redirect_uri_problem(uri: object) -> str | None:
    """Why `uri` may not be registered as a redirect URI, or None when it may."""
    if not isinstance(uri, str) or not uri or len(uri) > MAX_LENGTH:
        return f"a redirect URI must be a string of 1 to {MAX_LENGTH} characters"
    try:
        parts = urlsplit(uri)
        parts.port  # noqa: B018 -- raises ValueError for a bad port
    except ValueError:
        return "redirect URI is not a valid URI"
    checks = (
        ("*" in uri, "wildcards are not allowed in redirect URIs"),
        (not uri.isascii(), "redirect URI must be ASCII (percent-encode the rest)"),
        (any(ord(c) < 0x21 or ord(c) == 0x7F for c in uri), "redirect URI contains spaces"),
        (parts.scheme not in ("https", "http"), "redirect URI must use https (or loopback http)"),
        (not parts.hostname, "redirect URI must be absolute"),
        (_HOST.fullmatch(parts.hostname or "") is None, "redirect URI host is not a host name"),
        ("#" in uri, "redirect URI must not contain a fragment"),
        ("@" in parts.netloc, "redirect URI must not contain user information"),
        (
            parts.scheme == "http" and parts.hostname not in LOOPBACK_HOSTS,
            "http redirect URIs are only allowed on loopback hosts",
        ),
    )
    return next((message for failed, message in checks if failed), None)


def is_loopback_uri(uri: str) -> bool:
    parts = urlsplit(uri)
    return parts.scheme == "http" and parts.hostname in LOOPBACK_HOSTS


def matches(requested: str, registered: str) -> bool:
    """Whether a requested redirect URI matches a registered one (exactly, or for loopback
    http URIs exactly but for the port)."""
    if requested == registered:
        return True
    if not (is_loopback_uri(requested) and is_loopback_uri(registered)):
        return False
    try:
        asked, known = urlsplit(requested), urlsplit(registered)
        asked.port, known.port  # noqa: B018 -- raises ValueError for a bad port
    except ValueError:
        return False
    return (asked.hostname, asked.path, asked.query, asked.fragment, asked.username) == (
        known.hostname,
        known.path,
        known.query,
        known.fragment,
        known.username,
    )


def with_parameters(uri: str, parameters: dict[str, str | None]) -> str:
    """`uri` with `parameters` (None values left out) added to its query, keeping the query it
    had (RFC 6749 section 4.1.2)."""
    parts = urlsplit(uri)
    added = urlencode({k: v for k, v in parameters.items() if v is not None})
    query = f"{parts.query}&{added}" if parts.query else added
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, ""))


def host_of(uri: str) -> str:
    """The host[:port] a user is sent back to, as shown on the consent page."""
    return urlsplit(uri).netloc
