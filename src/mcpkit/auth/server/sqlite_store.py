"""`AuthStore` in a SQLite file (stdlib sqlite3): the default, persistent store.

Every call runs on one worker thread that owns the connection, so the event loop never waits
on the disk and calls never interleave. Single statements are atomic on their own (the
connection is in autocommit mode); "use" is one `UPDATE ... RETURNING`, so two processes
sharing the file cannot both take the same code. The file is created readable by its owner
only: it holds the private signing keys. WAL mode lets readers and the writer overlap.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import sqlite3
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path
from typing import Any, TypeVar

from mcpkit.auth.server.store import ClientRecord, CodeRecord, KeyRecord, RefreshRecord

T = TypeVar("T")

SCHEMA = """
CREATE TABLE IF NOT EXISTS clients (client_id TEXT PRIMARY KEY, record TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS codes (
    code_hash TEXT PRIMARY KEY, record TEXT NOT NULL,
    uses INTEGER NOT NULL DEFAULT 0, expires_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS refresh_tokens (
    token_hash TEXT PRIMARY KEY, grant_id TEXT NOT NULL, record TEXT NOT NULL,
    uses INTEGER NOT NULL DEFAULT 0, expires_at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS refresh_by_grant ON refresh_tokens (grant_id);
CREATE TABLE IF NOT EXISTS revocations (identifier TEXT PRIMARY KEY, until REAL NOT NULL);
CREATE TABLE IF NOT EXISTS signing_keys (
    kid TEXT PRIMARY KEY, record TEXT NOT NULL, created_at REAL NOT NULL,
    expires_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS secrets (name TEXT PRIMARY KEY, value BLOB NOT NULL);
"""


class SQLiteStore:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mcpkit-auth-db")
        self._db: sqlite3.Connection | None = None
        self._closed = False

    def _connect(self) -> sqlite3.Connection:
        if self._db is None:
            if not self.path.exists():  # owner-only from the start: it holds private keys
                os.close(os.open(self.path, os.O_CREAT | os.O_WRONLY, 0o600))
            db = sqlite3.connect(self.path, isolation_level=None, timeout=10.0)
            db.execute("PRAGMA journal_mode=WAL")
            db.executescript(SCHEMA)
            self._db = db
        return self._db

    async def _run(self, work: Callable[[sqlite3.Connection], T]) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, lambda: work(self._connect()))

    async def save_client(self, client: ClientRecord) -> None:
        row = (client.client_id, json.dumps(asdict(client)))
        await self._run(lambda db: db.execute("INSERT OR REPLACE INTO clients VALUES (?, ?)", row))

    async def get_client(self, client_id: str) -> ClientRecord | None:
        sql = "SELECT record FROM clients WHERE client_id = ?"
        row = await self._run(lambda db: db.execute(sql, (client_id,)).fetchone())
        return None if row is None else ClientRecord(**json.loads(row[0]))

    async def save_code(self, code: CodeRecord) -> None:
        row = (code.code_hash, json.dumps(asdict(code)), code.expires_at)
        sql = "INSERT INTO codes (code_hash, record, expires_at) VALUES (?, ?, ?)"
        await self._run(lambda db: db.execute(sql, row))

    async def use_code(self, code_hash: str) -> tuple[CodeRecord | None, bool]:
        return await self._use("codes", "code_hash", code_hash, _code)

    async def save_refresh(self, token: RefreshRecord) -> None:
        row = (token.token_hash, token.grant_id, json.dumps(asdict(token)), token.expires_at)
        sql = (
            "INSERT INTO refresh_tokens (token_hash, grant_id, record, expires_at)"
            " VALUES (?, ?, ?, ?)"
        )
        await self._run(lambda db: db.execute(sql, row))

    async def use_refresh(self, token_hash: str) -> tuple[RefreshRecord | None, bool]:
        return await self._use("refresh_tokens", "token_hash", token_hash, _refresh)

    async def _use(
        self, table: str, column: str, key: str, load: Callable[[dict[str, Any]], T]
    ) -> tuple[T | None, bool]:
        """Mark a record used, in one statement; the record and whether it was unused."""
        sql = f"UPDATE {table} SET uses = uses + 1 WHERE {column} = ? RETURNING record, uses"
        row = await self._run(lambda db: db.execute(sql, (key,)).fetchone())
        if row is None:
            return None, False
        return load(json.loads(row[0])), row[1] == 1

    async def find_refresh(self, token_hash: str) -> tuple[RefreshRecord | None, bool]:
        sql = "SELECT record, uses FROM refresh_tokens WHERE token_hash = ?"
        row = await self._run(lambda db: db.execute(sql, (token_hash,)).fetchone())
        if row is None:
            return None, False
        return _refresh(json.loads(row[0])), row[1] == 0

    async def revoke(self, identifier: str, until: float) -> None:
        def work(db: sqlite3.Connection) -> None:
            with _transaction(db):
                db.execute(
                    "INSERT INTO revocations VALUES (?, ?) ON CONFLICT (identifier) "
                    "DO UPDATE SET until = max(until, excluded.until)",
                    (identifier, until),
                )
                db.execute("DELETE FROM refresh_tokens WHERE grant_id = ?", (identifier,))

        await self._run(work)

    async def is_revoked(self, *identifiers: str) -> bool:
        marks = ", ".join("?" * len(identifiers))
        sql = f"SELECT 1 FROM revocations WHERE identifier IN ({marks}) LIMIT 1"
        return await self._run(lambda db: db.execute(sql, identifiers).fetchone() is not None)

    async def add_key(self, key: KeyRecord) -> None:
        row = (key.kid, json.dumps(asdict(key)), key.created_at, key.expires_at)
        await self._run(lambda db: db.execute("INSERT INTO signing_keys VALUES (?, ?, ?, ?)", row))

    async def keys(self) -> list[KeyRecord]:
        sql = "SELECT record FROM signing_keys ORDER BY created_at"
        rows = await self._run(lambda db: db.execute(sql).fetchall())
        return [KeyRecord(**json.loads(row[0])) for row in rows]

    async def secret(self, name: str) -> bytes:
        def work(db: sqlite3.Connection) -> bytes:
            insert = "INSERT OR IGNORE INTO secrets VALUES (?, ?)"
            db.execute(insert, (name, secrets.token_bytes(32)))
            value: bytes = db.execute(
                "SELECT value FROM secrets WHERE name = ?", (name,)
            ).fetchone()[0]
            return value

        return await self._run(work)

    async def purge(self, now: float) -> None:
        def work(db: sqlite3.Connection) -> None:
            with _transaction(db):
                for table, column in _EXPIRING:
                    db.execute(f"DELETE FROM {table} WHERE {column} <= ?", (now,))

        await self._run(work)

    async def close(self) -> None:
        """Close the connection and its thread (again: nothing happens)."""
        if self._closed:
            return
        self._closed = True

        def work() -> None:
            if self._db is not None:
                self._db.close()
                self._db = None

        await asyncio.get_running_loop().run_in_executor(self._executor, work)
        self._executor.shutdown(wait=True)


_EXPIRING = (
    ("codes", "expires_at"),
    ("refresh_tokens", "expires_at"),
    ("revocations", "until"),
    ("signing_keys", "expires_at"),
)


@contextlib.contextmanager
def _transaction(db: sqlite3.Connection) -> Iterator[None]:
    """BEGIN IMMEDIATE ... COMMIT (ROLLBACK on error) on an autocommit connection."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def _code(data: dict[str, Any]) -> CodeRecord:
    return CodeRecord(**{**data, "scopes": tuple(data["scopes"])})


def _refresh(data: dict[str, Any]) -> RefreshRecord:
    return RefreshRecord(**{**data, "scopes": tuple(data["scopes"])})
