"""What you tell the OAuth client about itself: pre-registered credentials and client metadata.

Small frozen dataclasses; secrets are kept out of their `repr`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlsplit

AUTH_METHODS = ("client_secret_basic", "client_secret_post", "none", "private_key_jwt")


@dataclass(frozen=True, slots=True)
class ClientCredentials:
    """A client registered with an authorization server beforehand.

    `client_secret` for `client_secret_basic`/`client_secret_post`, or `private_key` (PEM)
    for `private_key_jwt` (signed with `signing_algorithm`, by default the key's own: ES256
    for P-256, RS256 for RSA, EdDSA for Ed25519); neither for a public client (`none`).
    `auth_method` pins the token endpoint authentication; None picks from what is given and
    what the server supports. `issuer` binds the credentials to one authorization server:
    when the server's resource metadata names another, the client fails instead of presenting
    them there (None: whichever server the resource names).
    """

    client_id: str
    client_secret: str | None = field(default=None, repr=False)
    private_key: str | None = field(default=None, repr=False)
    signing_algorithm: str | None = None
    auth_method: str | None = None
    issuer: str | None = None

    def __post_init__(self) -> None:
        if self.auth_method is not None and self.auth_method not in AUTH_METHODS:
            raise ValueError(f"unknown token endpoint auth method {self.auth_method!r}")
        if self.client_secret is not None and self.private_key is not None:
            raise ValueError("give a client_secret or a private_key, not both")


@dataclass(frozen=True, slots=True)
class ClientMetadata:
    """How the client describes itself when it registers.

    `metadata_url`: the https URL where its Client ID Metadata Document is published; it
    becomes the client id at authorization servers that support such documents (the document
    itself is yours to host: it must list the redirect URIs you use). `redirect_uris`: where
    the authorization server may send the browser back; empty lets the approval choose (a
    loopback URL for `Browser`). `application_type`: "native" for desktop and command-line
    clients, "web" for a web application (dynamic registration).
    """

    client_name: str = "mcpkit"
    redirect_uris: tuple[str, ...] = ()
    metadata_url: str | None = None
    application_type: str = "native"
    client_uri: str | None = None

    def __post_init__(self) -> None:
        if self.metadata_url is not None:
            parts = urlsplit(self.metadata_url)
            if parts.scheme != "https" or not parts.hostname or parts.path in ("", "/"):
                raise ValueError(
                    "a client metadata document URL must be https with a path, got "
                    f"{self.metadata_url!r}"
                )
        if self.application_type not in ("native", "web"):
            raise ValueError("application_type is 'native' or 'web'")
