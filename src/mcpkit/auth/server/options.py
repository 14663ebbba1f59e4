"""How an authorization server is configured: three frozen dataclasses.

`AuthServerOptions` is the whole configuration; `ClientConfig` pre-registers one client (the
third way to register, beside dynamic registration and metadata documents); `CIMDOptions` sets
the rules for fetching Client ID Metadata Documents. Everything the server derives (endpoint
paths, the store) comes from here; `check()` refuses contradictory settings early.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from mcpkit.auth.server.limits import RateLimits
from mcpkit.auth.server.redirects import redirect_uri_problem

if TYPE_CHECKING:
    from mcpkit.auth.server.store import AuthStore
    from mcpkit.auth.server.users import LoginAttempt

# Who is signing in: the subject for a login attempt, or None (see mcpkit.auth.server.users).
Authenticate = Callable[["LoginAttempt"], Awaitable[str | None]]


def is_loopback(host: str) -> bool:
    """Whether a host name or address (IPv6 with or without brackets) is this machine's."""
    host = host.strip("[]").lower()
    return host in ("localhost", "::1") or host.startswith("127.")


GRANT_TYPES = ("authorization_code", "refresh_token", "client_credentials")
AUTH_METHODS = ("client_secret_basic", "client_secret_post", "none", "private_key_jwt")
ALGORITHMS = ("RS256", "ES256")


@dataclass(frozen=True)
class ClientConfig:
    """A pre-registered client. `client_secret` makes it confidential (authenticated with
    `token_endpoint_auth_method`, client_secret_basic by default); `jwks` (a JWK Set) makes it
    a private_key_jwt client; neither: a public client ("none"). `scope`: the scopes it may
    ask for, space-separated (None: any the server grants). `introspect`: it may call the
    introspection endpoint (a resource server)."""

    client_id: str
    redirect_uris: tuple[str, ...] = ()
    client_secret: str | None = None
    grant_types: tuple[str, ...] = ("authorization_code", "refresh_token")
    token_endpoint_auth_method: str | None = None
    client_name: str | None = None
    scope: str | None = None
    jwks: Mapping[str, Any] | None = None
    introspect: bool = False

    def auth_method(self) -> str:
        if self.token_endpoint_auth_method is not None:
            return self.token_endpoint_auth_method
        if self.client_secret is not None:
            return "client_secret_basic"
        return "private_key_jwt" if self.jwks is not None else "none"


@dataclass(frozen=True)
class CIMDOptions:
    """Client ID Metadata Documents: a client whose id is an https URL is described by the
    JSON document at that URL, fetched when first seen.

    The fetch is guarded against server-side request forgery: the host is resolved once and
    every address must be public (no private, loopback, link-local, multicast or reserved
    address) unless it lies in `allowed_networks` (CIDR strings; tests allow 127.0.0.1/32);
    the request goes to the address checked, follows no redirect, and is cut off after
    `max_bytes` or `timeout` seconds. `trusted_hosts`, when not empty, lists the only hosts
    (or `.suffix` domains) whose documents are accepted. `allow_http` accepts http:// client
    ids too (development only). Documents are cached per their Cache-Control, at most
    `max_cache_age` seconds (`default_cache_age` when they say nothing), `cache_size` of them.
    """

    enabled: bool = True
    allowed_networks: tuple[str, ...] = ()
    trusted_hosts: tuple[str, ...] = ()
    allow_http: bool = False
    max_bytes: int = 16 * 1024
    timeout: float = 5.0
    default_cache_age: float = 300.0
    max_cache_age: float = 24 * 3600.0
    cache_size: int = 1024


@dataclass(frozen=True)
class AuthServerOptions:
    """An authorization server's configuration.

    `issuer`: its absolute URL (https, or http on a loopback host); every endpoint path is
    derived from its path (`<issuer>/authorize`, `/token`, `/register`, `/revoke`,
    `/introspect`, `/jwks`; metadata at `/.well-known/oauth-authorization-server<path>`).
    `store`: an `AuthStore`, or a file path for the default SQLite store.
    `scopes`: the scopes it grants (empty: whatever a client asks for); `default_scopes`
    when a request names none. `resources`: the resource indicators (RFC 8707) it issues
    tokens for (empty: any absolute URI); `default_resource`: the audience of a token whose
    request names no resource (None: the issuer itself).
    `authenticate`: who the user at the consent page is (see `mcpkit.auth.server.users`).
    `dev_approve`: approve every authorization at once as `dev_subject`, with no page --
    only for an issuer on a loopback host, and only on a loopback connection.
    `registration`: dynamic client registration (RFC 7591) is open; `registration_token`,
    when set, is the bearer token it requires. `self_registered_grant_types`: what clients
    that registered themselves (dynamically or by metadata document) may use;
    client_credentials is kept for pre-registered clients unless added here.
    `rate_limits`: registrations per address, failed client authentications and sign-ins
    (see `mcpkit.auth.server.limits`).
    Lifetimes are in seconds; signing keys rotate every `key_rotation` seconds, and the
    previous key stays published for as long again.
    """

    issuer: str
    store: AuthStore | str | Path = "mcpkit-auth.sqlite3"
    scopes: tuple[str, ...] = ()
    default_scopes: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()
    default_resource: str | None = None
    clients: tuple[ClientConfig, ...] = ()
    authenticate: Authenticate | None = None
    dev_approve: bool = False
    dev_subject: str = "dev-user"
    registration: bool = True
    registration_token: str | None = None
    self_registered_grant_types: tuple[str, ...] = ("authorization_code", "refresh_token")
    cimd: CIMDOptions = field(default_factory=CIMDOptions)
    rate_limits: RateLimits = field(default_factory=RateLimits)
    access_token_ttl: int = 900
    refresh_token_ttl: int = 30 * 24 * 3600
    code_ttl: int = 120
    key_algorithm: str = "RS256"
    key_rotation: int = 30 * 24 * 3600
    max_body: int = 64 * 1024
    openid_configuration: bool = False
    clock: Callable[[], float] = time.time

    def check(self) -> None:
        """Raises ValueError for a configuration that cannot work or would be unsafe."""
        self._check_issuer()
        if self.authenticate is None and not self.dev_approve:
            raise ValueError("give authenticate (e.g. PasswordUsers) or dev_approve=True")
        if self.key_algorithm not in ALGORITHMS:
            raise ValueError(f"key_algorithm must be one of {ALGORITHMS}")
        if self.key_rotation <= self.access_token_ttl + 120:
            raise ValueError("key_rotation must exceed access_token_ttl by more than 2 minutes")
        if self.resources and self.default_resource not in (None, *self.resources):
            raise ValueError("default_resource must be one of resources")
        if any(s.strip() != s or not s or " " in s for s in self.scopes):
            raise ValueError("scopes must be non-empty strings without spaces")
        unknown = set(self.self_registered_grant_types) - set(GRANT_TYPES)
        if unknown:
            raise ValueError(f"unknown grant types: {sorted(unknown)}")
        for client in self.clients:
            _check_client(client)

    def _check_issuer(self) -> None:
        parts = urlsplit(self.issuer)
        host = parts.hostname or ""
        if parts.scheme not in ("https", "http") or not host:
            raise ValueError(f"issuer must be an absolute https URL: {self.issuer!r}")
        if parts.scheme == "http" and not is_loopback(host):
            raise ValueError("issuer must use https (http only on a loopback host)")
        if parts.query or parts.fragment or self.issuer.endswith("/"):
            raise ValueError("issuer must have no query, fragment or trailing slash")
        if self.dev_approve and not is_loopback(host):
            raise ValueError("dev_approve is only allowed for an issuer on a loopback host")

    @property
    def base_path(self) -> str:
        """The issuer's path ("" at the root): the prefix of every endpoint."""
        return urlsplit(self.issuer).path.rstrip("/")

    def endpoint(self, name: str) -> str:
        """The absolute URL of endpoint `name` ("authorize", "token", ...)."""
        return f"{self.issuer}/{name}"


def _check_client(client: ClientConfig) -> None:
    name = f"client {client.client_id!r}"
    unknown = set(client.grant_types) - set(GRANT_TYPES)
    if unknown:
        raise ValueError(f"{name}: unknown grant types: {sorted(unknown)}")
    if client.auth_method() not in AUTH_METHODS:
        raise ValueError(f"{name}: unknown auth method")
    for uri in client.redirect_uris:
        problem = redirect_uri_problem(uri)
        if problem is not None:
            raise ValueError(f"{name}: {problem}")
