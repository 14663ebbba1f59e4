"""What an authorization server keeps, and the small interface it keeps it behind.

Two implementations: `MemoryAuthStore` (tests, one process) and `SQLiteStore` (the default: a
file, so a restart loses no client, refresh token or signing key, and several processes on
one host can share it).

- clients registered dynamically (pre-registered ones live in the options, metadata-document
  clients in a cache);
- authorization codes and refresh tokens, each stored under the SHA-256 of its value (a
  stolen store holds nothing that can be presented). Taking one is atomic: `use_code` and
  `use_refresh` mark it used and say whether it had been used before, which is how a replayed
  code or a reused (already rotated) refresh token is caught;
- revocations: identifiers (a grant id, an access token's jti, a client assertion's jti) with
  the time until which they must be remembered. Revoking a grant id also deletes the refresh
  tokens of that grant (its "family");
- signing keys, each with the time it leaves the JWKS; and named random secrets.

`purge(now)` drops whatever has expired; the server calls it now and then.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Protocol


def digest(value: str) -> str:
    """How codes, refresh tokens and client secrets are stored: SHA-256, hex. They are 256-bit
    random values (or secrets an operator chose), so a fast hash is enough."""
    return hashlib.sha256(value.encode()).hexdigest()


@dataclass(frozen=True)
class ClientRecord:
    """A client as registered: `metadata` is its RFC 7591 metadata as accepted (what the
    registration response echoes); `secret_hash` the digest of its secret, if it has one."""

    client_id: str
    metadata: dict[str, Any]
    secret_hash: str | None
    issued_at: int


@dataclass(frozen=True)
class CodeRecord:
    """An authorization code's grant, waiting for the client to redeem it."""

    code_hash: str
    grant_id: str
    client_id: str
    subject: str
    scopes: tuple[str, ...]
    resource: str
    redirect_uri: str
    redirect_uri_given: bool
    code_challenge: str
    expires_at: float


@dataclass(frozen=True)
class RefreshRecord:
    """A refresh token. Tokens of one grant share `grant_id` (the rotation family)."""

    token_hash: str
    grant_id: str
    client_id: str
    subject: str
    scopes: tuple[str, ...]
    resource: str
    expires_at: float


@dataclass(frozen=True)
class KeyRecord:
    """A signing key: `private_pem` is PKCS#8 PEM. It signs while it is the newest, and stays
    published (and in the store) until `expires_at`."""

    kid: str
    algorithm: str
    private_pem: str
    created_at: float
    expires_at: float


class AuthStore(Protocol):
    async def save_client(self, client: ClientRecord) -> None: ...

    async def get_client(self, client_id: str) -> ClientRecord | None: ...

    async def save_code(self, code: CodeRecord) -> None: ...

    async def use_code(self, code_hash: str) -> tuple[CodeRecord | None, bool]:
        """The code and whether this is its first use (it is marked used either way)."""
        ...

    async def save_refresh(self, token: RefreshRecord) -> None: ...

    async def use_refresh(self, token_hash: str) -> tuple[RefreshRecord | None, bool]:
        """The refresh token and whether this is its first use (marked used either way)."""
        ...

    async def find_refresh(self, token_hash: str) -> tuple[RefreshRecord | None, bool]:
        """The refresh token and whether it is still unused, without using it."""
        ...

    async def revoke(self, identifier: str, until: float) -> None:
        """Remember `identifier` as revoked until `until`; when it is a grant id, delete that
        grant's refresh tokens too."""
        ...

    async def is_revoked(self, *identifiers: str) -> bool:
        """Whether any of `identifiers` is revoked."""
        ...

    async def add_key(self, key: KeyRecord) -> None: ...

    async def keys(self) -> list[KeyRecord]:
        """Every key stored, oldest first."""
        ...

    async def secret(self, name: str) -> bytes:
        """A random 32-byte secret under `name`, made on first use and the same ever after
        (for every process sharing the store)."""
        ...

    async def purge(self, now: float) -> None:
        """Drop codes, refresh tokens, revocations and keys whose time has passed."""
        ...

    async def close(self) -> None: ...
