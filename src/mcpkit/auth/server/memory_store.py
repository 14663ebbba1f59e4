"""`AuthStore` in memory: for tests and single-process development (lost on restart)."""

from __future__ import annotations

import secrets
from typing import TypeVar

from mcpkit.auth.server.store import ClientRecord, CodeRecord, KeyRecord, RefreshRecord

T = TypeVar("T")


class MemoryAuthStore:
    def __init__(self) -> None:
        self._clients: dict[str, ClientRecord] = {}
        self._codes: dict[str, tuple[CodeRecord, bool]] = {}
        self._refresh: dict[str, tuple[RefreshRecord, bool]] = {}
        self._revoked: dict[str, float] = {}
        self._keys: list[KeyRecord] = []
        self._secrets: dict[str, bytes] = {}

    async def save_client(self, client: ClientRecord) -> None:
        self._clients[client.client_id] = client

    async def get_client(self, client_id: str) -> ClientRecord | None:
        return self._clients.get(client_id)

    async def save_code(self, code: CodeRecord) -> None:
        self._codes[code.code_hash] = (code, False)

    async def use_code(self, code_hash: str) -> tuple[CodeRecord | None, bool]:
        return _use(self._codes, code_hash)

    async def save_refresh(self, token: RefreshRecord) -> None:
        self._refresh[token.token_hash] = (token, False)

    async def use_refresh(self, token_hash: str) -> tuple[RefreshRecord | None, bool]:
        return _use(self._refresh, token_hash)

    async def find_refresh(self, token_hash: str) -> tuple[RefreshRecord | None, bool]:
        found = self._refresh.get(token_hash)
        return (None, False) if found is None else (found[0], not found[1])

    async def revoke(self, identifier: str, until: float) -> None:
        self._revoked[identifier] = max(until, self._revoked.get(identifier, until))
        family = [h for h, (r, _) in self._refresh.items() if r.grant_id == identifier]
        for token_hash in family:
            del self._refresh[token_hash]

    async def is_revoked(self, *identifiers: str) -> bool:
        return any(i in self._revoked for i in identifiers)

    async def add_key(self, key: KeyRecord) -> None:
        self._keys.append(key)
        self._keys.sort(key=lambda k: k.created_at)

    async def keys(self) -> list[KeyRecord]:
        return list(self._keys)

    async def secret(self, name: str) -> bytes:
        return self._secrets.setdefault(name, secrets.token_bytes(32))

    async def purge(self, now: float) -> None:
        self._codes = {h: c for h, c in self._codes.items() if c[0].expires_at > now}
        self._refresh = {h: r for h, r in self._refresh.items() if r[0].expires_at > now}
        self._revoked = {i: t for i, t in self._revoked.items() if t > now}
        self._keys = [k for k in self._keys if k.expires_at > now]

    async def close(self) -> None:
        return None


def _use(table: dict[str, tuple[T, bool]], key: str) -> tuple[T | None, bool]:
    """The record under `key` and whether it was unused; it is marked used."""
    found = table.get(key)
    if found is None:
        return None, False
    table[key] = (found[0], True)
    return found[0], not found[1]
