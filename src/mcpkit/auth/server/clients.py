"""Clients: what a client's metadata may say, and where a client id is looked up.

Three kinds of client, one `OAuthClient` view: pre-registered in the options, registered
dynamically (RFC 7591, kept in the store), and described by a Client ID Metadata Document
(the client id is the document's URL; fetched and cached by `MetadataDocuments`). Dynamic
registration and metadata documents pass the same `check_metadata`: redirect URIs by the
rules of `redirects`, grant types within what self-registered clients may use, a known
authentication method with what it needs, scopes the server grants.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from mcpkit.auth.server.asgi import OAuthErrorResponse
from mcpkit.auth.server.options import AUTH_METHODS, AuthServerOptions, ClientConfig
from mcpkit.auth.server.redirects import redirect_uri_problem
from mcpkit.auth.server.store import AuthStore, ClientRecord, digest

MAX_REDIRECT_URIS = 20
_TEXT_FIELDS = (
    "client_name",
    "client_uri",
    "logo_uri",
    "tos_uri",
    "policy_uri",
    "software_id",
    "software_version",
)
_MAX_TEXT = 2000


class MetadataError(OAuthErrorResponse):
    """Client metadata refused (RFC 7591 section 3.2.2)."""

    def __init__(self, description: str, error: str = "invalid_client_metadata") -> None:
        super().__init__(error, description)


@dataclass(frozen=True)
class OAuthClient:
    """A client as the endpoints see it. `scopes` None: any scope the server grants.
    `kind`: "configured", "registered" or "document"."""

    client_id: str
    redirect_uris: tuple[str, ...]
    grant_types: tuple[str, ...]
    auth_method: str
    secret_hash: str | None
    name: str | None
    scopes: tuple[str, ...] | None
    jwks: Mapping[str, Any] | None
    jwks_uri: str | None
    kind: str
    introspect: bool = False

    @property
    def public(self) -> bool:
        return self.auth_method == "none"

    @classmethod
    def from_metadata(
        cls, client_id: str, metadata: Mapping[str, Any], secret_hash: str | None, kind: str
    ) -> OAuthClient:
        scope = metadata.get("scope")
        return cls(
            client_id=client_id,
            redirect_uris=tuple(metadata.get("redirect_uris", ())),
            grant_types=tuple(metadata["grant_types"]),
            auth_method=metadata["token_endpoint_auth_method"],
            secret_hash=secret_hash,
            name=metadata.get("client_name"),
            scopes=tuple(scope.split()) if scope else None,
            jwks=metadata.get("jwks"),
            jwks_uri=metadata.get("jwks_uri"),
            kind=kind,
        )

    @classmethod
    def from_config(cls, config: ClientConfig) -> OAuthClient:
        secret = config.client_secret
        return cls(
            client_id=config.client_id,
            redirect_uris=config.redirect_uris,
            grant_types=config.grant_types,
            auth_method=config.auth_method(),
            secret_hash=digest(secret) if secret is not None else None,
            name=config.client_name,
            scopes=tuple(config.scope.split()) if config.scope else None,
            jwks=config.jwks,
            jwks_uri=None,
            kind="configured",
            introspect=config.introspect,
        )


def check_metadata(
    document: Mapping[str, Any],
    options: AuthServerOptions,
    *,
    default_method: str,
    methods: tuple[str, ...] = AUTH_METHODS,
) -> dict[str, Any]:
    """The client metadata accepted from `document` (unknown members dropped, defaults
    filled in). Raises MetadataError (invalid_redirect_uri or invalid_client_metadata)."""
    grant_types = _string_list(document, "grant_types", ["authorization_code"])
    for grant in grant_types:
        if grant not in options.self_registered_grant_types:
            raise MetadataError(f"grant type {grant!r} is not available to this client")
    if set(_string_list(document, "response_types", ["code"])) - {"code"}:
        raise MetadataError("the only response type is code")
    response_types = ["code"] if "authorization_code" in grant_types else []
    accepted: dict[str, Any] = {"grant_types": grant_types, "response_types": response_types}
    accepted["redirect_uris"] = _redirect_uris(document, "authorization_code" in grant_types)
    allow_http = options.cimd.allow_http  # development: documents and keys over http
    accepted.update(_auth_method(document, default_method, methods, grant_types, allow_http))
    scope = document.get("scope")
    if scope is not None:
        if not isinstance(scope, str) or not scope.split():
            raise MetadataError("scope must be a space-separated string")
        unknown = set(scope.split()) - set(options.scopes) if options.scopes else set()
        if unknown:
            raise MetadataError(f"unknown scopes: {' '.join(sorted(unknown))}")
        accepted["scope"] = " ".join(scope.split())
    for name in _TEXT_FIELDS:
        value = document.get(name)
        if value is not None:
            if not isinstance(value, str) or len(value) > _MAX_TEXT:
                raise MetadataError(f"{name} must be a string")
            accepted[name] = value
    contacts = document.get("contacts")
    if contacts is not None:
        accepted["contacts"] = _string_list(document, "contacts", [])
    if document.get("application_type") in ("web", "native"):
        accepted["application_type"] = document["application_type"]
    return accepted


def _string_list(document: Mapping[str, Any], name: str, default: list[str]) -> list[str]:
    value = document.get(name, default)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise MetadataError(f"{name} must be a list of strings")
    if len(value) > MAX_REDIRECT_URIS:
        raise MetadataError(f"{name} has too many entries")
    return list(dict.fromkeys(value))


def _redirect_uris(document: Mapping[str, Any], required: bool) -> list[str]:
    uris = document.get("redirect_uris")
    if uris is None and not required:
        return []
    if not isinstance(uris, list) or not uris:
        raise MetadataError("redirect_uris must be a non-empty list", "invalid_redirect_uri")
    if len(uris) > MAX_REDIRECT_URIS:
        raise MetadataError("too many redirect_uris", "invalid_redirect_uri")
    for uri in uris:
        problem = redirect_uri_problem(uri)
        if problem is not None:
            raise MetadataError(problem, "invalid_redirect_uri")
    return list(dict.fromkeys(uris))


def _auth_method(
    document: Mapping[str, Any],
    default: str,
    methods: tuple[str, ...],
    grants: list[str],
    allow_http: bool,
) -> dict[str, Any]:
    method = document.get("token_endpoint_auth_method", default)
    if method not in methods:
        raise MetadataError(f"token_endpoint_auth_method must be one of {', '.join(methods)}")
    if method == "none" and "client_credentials" in grants:
        raise MetadataError("a public client cannot use client_credentials")
    accepted: dict[str, Any] = {"token_endpoint_auth_method": method}
    if method != "private_key_jwt":
        return accepted
    jwks, jwks_uri = document.get("jwks"), document.get("jwks_uri")
    if (jwks is None) == (jwks_uri is None):
        raise MetadataError("private_key_jwt needs exactly one of jwks and jwks_uri")
    if jwks is not None:
        if not isinstance(jwks, dict) or not isinstance(jwks.get("keys"), list):
            raise MetadataError("jwks must be a JWK Set")
        accepted["jwks"] = jwks
    else:
        schemes = ("https://", "http://") if allow_http else ("https://",)
        if not isinstance(jwks_uri, str) or not jwks_uri.startswith(schemes):
            raise MetadataError("jwks_uri must be an https URL")
        accepted["jwks_uri"] = jwks_uri
    return accepted


class DocumentClients(Protocol):
    """Clients described by metadata documents (`cimd.MetadataDocuments`)."""

    def is_document_url(self, client_id: str) -> bool: ...

    async def client(self, client_id: str) -> OAuthClient: ...


class ClientDirectory:
    """Finds a client by id: the options first, then a metadata document (for a URL-shaped
    id), then the store."""

    def __init__(
        self, options: AuthServerOptions, store: AuthStore, documents: DocumentClients | None
    ) -> None:
        self._configured = {c.client_id: OAuthClient.from_config(c) for c in options.clients}
        self._store = store
        self._documents = documents

    async def find(self, client_id: str) -> OAuthClient | None:
        """The client, or None when nobody registered it. Raises OAuthErrorResponse
        (invalid_client) when its metadata document cannot be fetched or is invalid."""
        found = self._configured.get(client_id)
        if found is not None:
            return found
        if self._documents is not None and self._documents.is_document_url(client_id):
            return await self._documents.client(client_id)
        record = await self._store.get_client(client_id)
        if record is None:
            return None
        return OAuthClient.from_metadata(
            client_id, record.metadata, record.secret_hash, "registered"
        )

    async def register(self, record: ClientRecord) -> None:
        await self._store.save_client(record)
