"""What the OAuth client remembers about a server: its tokens and its client registrations.

`Tokens` and `Registration` are frozen records with JSON forms for a `TokenStore`; a server's
record is `{"tokens": {...}, "clients": {issuer: {...}}}` under its canonical URI. Client
registrations are keyed by the issuer that made them (MCP: credentials are bound to one
authorization server). Secrets stay out of every `repr`.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

JSONObject = dict[str, Any]
REFRESH_MARGIN = 60.0  # seconds before expiry at which a token counts as expiring


@dataclass(frozen=True, slots=True)
class Tokens:
    """An access token (and maybe a refresh token) from the authorization server `issuer`
    for `resource`, with the scopes in `scope` (what was requested and what was granted);
    `token_endpoint` is where a refresh goes."""

    access_token: str = field(repr=False)
    issuer: str
    token_endpoint: str
    resource: str
    token_type: str = "Bearer"
    refresh_token: str | None = field(default=None, repr=False)
    expires_at: float | None = None
    scope: str | None = None

    def expiring(self, now: float | None = None) -> bool:
        if self.expires_at is None:
            return False
        return (time.time() if now is None else now) >= self.expires_at - REFRESH_MARGIN

    def scopes(self) -> set[str]:
        return set((self.scope or "").split())

    def to_json(self) -> JSONObject:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Any) -> Tokens | None:
        """The record as stored, or None when it is not one (a damaged or older store)."""
        try:
            tokens = cls(**data)
        except TypeError:
            return None
        return tokens if isinstance(tokens.access_token, str) else None


@dataclass(frozen=True, slots=True)
class Registration:
    """A client id (and secret) at the authorization server `issuer`, and how it
    authenticates at the token endpoint."""

    client_id: str
    issuer: str
    auth_method: str = "none"
    client_secret: str | None = field(default=None, repr=False)
    redirect_uris: tuple[str, ...] = ()
    secret_expires_at: float | None = None  # 0 or None: never

    def expired(self, now: float | None = None) -> bool:
        if not self.secret_expires_at:
            return False
        return (time.time() if now is None else now) >= self.secret_expires_at

    def to_json(self) -> JSONObject:
        data = asdict(self)
        data["redirect_uris"] = list(self.redirect_uris)
        return data

    @classmethod
    def from_json(cls, data: Any) -> Registration | None:
        try:
            registration = cls(**{**data, "redirect_uris": tuple(data.get("redirect_uris", ()))})
        except (TypeError, AttributeError):
            return None
        return registration if isinstance(registration.client_id, str) else None
