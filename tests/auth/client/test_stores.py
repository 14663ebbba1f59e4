"""The token stores behind `OAuth`: one interface, three places."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit.auth.client import KeyringStore, MemoryTokenStore, OAuth
from mcpkit.auth.client.records import Registration, Tokens


def test_memory_store_round_trip_and_isolation() -> None:
    store = MemoryTokenStore()
    record: dict[str, Any] = {"tokens": {"access_token": "a"}}
    store.save("k", record)
    record["tokens"]["access_token"] = "changed"  # the store kept its own copy
    assert store.load("k") == {"tokens": {"access_token": "a"}}
    store.delete("k")
    assert store.load("k") is None


def test_records_survive_json_and_hide_secrets() -> None:
    tokens = Tokens(
        "secret-at", "https://as", "https://as/token", "https://mcp/mcp", refresh_token="secret-rt"
    )
    assert Tokens.from_json(tokens.to_json()) == tokens
    assert "secret" not in repr(tokens)
    registration = Registration(
        "id", "https://as", "client_secret_basic", "secret-cs", ("http://127.0.0.1:1/cb",)
    )
    assert Registration.from_json(registration.to_json()) == registration
    assert "s3cr3t" not in repr(registration)
    assert Tokens.from_json({"unexpected": 1}) is None  # a damaged store is ignored, not fatal


def test_a_stored_record_of_an_older_shape_is_ignored() -> None:
    store = MemoryTokenStore()
    store.save("https://mcp.example/mcp", {"tokens": {"access_token": "x"}})
    assert OAuth(store=store).tokens("https://mcp.example/mcp") is None


def test_keyring_store(monkeypatch: pytest.MonkeyPatch) -> None:
    import keyring  # the keyring extra, installed with dev
    from keyring.backend import KeyringBackend

    class InMemory(KeyringBackend):  # a real keyring backend, kept in memory
        priority = 1  # type: ignore[assignment]

        def __init__(self) -> None:
            super().__init__()
            self.entries: dict[tuple[str, str], str] = {}

        def get_password(self, service: str, username: str) -> str | None:
            return self.entries.get((service, username))

        def set_password(self, service: str, username: str, password: str) -> None:
            self.entries[(service, username)] = password

        def delete_password(self, service: str, username: str) -> None:
            if (service, username) not in self.entries:
                raise keyring.errors.PasswordDeleteError(username)
            del self.entries[(service, username)]

    backend = InMemory()
    previous = keyring.get_keyring()
    keyring.set_keyring(backend)
    try:
        store = KeyringStore()
        store.save("https://mcp.example/mcp", {"tokens": None})
        assert store.load("https://mcp.example/mcp") == {"tokens": None}
        assert list(backend.entries) == [("mcpkit-oauth", "https://mcp.example/mcp")]
        store.delete("https://mcp.example/mcp")
        store.delete("https://mcp.example/mcp")  # deleting twice is fine
        assert store.load("https://mcp.example/mcp") is None
    finally:
        keyring.set_keyring(previous)
