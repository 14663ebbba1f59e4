"""Where tokens and client registrations are kept between runs: a small store interface.

A `TokenStore` maps a key (an MCP server's canonical URI) to a JSON object (see
`records.py`). Three stores:

- `MemoryTokenStore`: this process only (the default of `OAuth`).
- `FileStore`: one JSON file, by default `oauth.json` in the user's config directory
  (`$XDG_CONFIG_HOME/mcpkit`, `~/.config/mcpkit`, or `%APPDATA%\\mcpkit` on Windows),
  created with mode 0600 in a 0700 directory and replaced atomically on each write. It holds
  refresh tokens and client secrets: it is readable by you only, and the store refuses to
  read a file that others can read or write.
- `KeyringStore`: the system keyring through the optional `keyring` package (imported when
  the store is made; ImportError when it is not installed).
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any, Protocol

import orjson

from mcpkit._extras import optional_dependency

JSONObject = dict[str, Any]


class TokenStore(Protocol):
    """Keeps one JSON object per key."""

    def load(self, key: str) -> JSONObject | None: ...

    def save(self, key: str, record: JSONObject) -> None: ...

    def delete(self, key: str) -> None: ...


class MemoryTokenStore:
    """Records in this process's memory."""

    def __init__(self) -> None:
        self._records: dict[str, bytes] = {}

    def load(self, key: str) -> JSONObject | None:
        data = self._records.get(key)
        return None if data is None else _object(data)

    def save(self, key: str, record: JSONObject) -> None:
        self._records[key] = orjson.dumps(record)

    def delete(self, key: str) -> None:
        self._records.pop(key, None)


def config_dir() -> Path:
    """The user's config directory for mcpkit."""
    if sys.platform == "win32" and os.environ.get("APPDATA"):
        return Path(os.environ["APPDATA"]) / "mcpkit"
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "mcpkit"


class FileStore:
    """Records in one JSON file that only its owner may read (0600).

    Raises PermissionError on load when the file is readable or writable by others.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else config_dir() / "oauth.json"
        self._lock = threading.Lock()

    def load(self, key: str) -> JSONObject | None:
        record = self._read().get(key)
        return record if isinstance(record, dict) else None

    def save(self, key: str, record: JSONObject) -> None:
        with self._lock:
            records = self._read()
            records[key] = record
            self._write(records)

    def delete(self, key: str) -> None:
        with self._lock:
            records = self._read()
            if records.pop(key, None) is not None:
                self._write(records)

    def _read(self) -> JSONObject:
        try:
            info = self.path.stat()
        except FileNotFoundError:
            return {}
        if os.name == "posix" and info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise PermissionError(
                f"{self.path} is open to other users (mode {stat.S_IMODE(info.st_mode):o}); "
                "it holds tokens: chmod 600 it, or delete it and log in again"
            )
        return _object(self.path.read_bytes()) or {}

    def _write(self, records: JSONObject) -> None:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        # mkstemp creates the file 0600: the tokens are never readable by others, not even
        # between the write and the rename.
        descriptor, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=".oauth-")
        try:
            with os.fdopen(descriptor, "wb") as file:
                file.write(orjson.dumps(records, option=orjson.OPT_INDENT_2))
            os.replace(temporary, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise


class KeyringStore:
    """Records in the system keyring (the `keyring` package), one entry per key."""

    def __init__(self, service: str = "mcpkit-oauth") -> None:
        with optional_dependency():
            import keyring  # type: ignore[import-not-found,unused-ignore]

        self._keyring = keyring
        self.service = service

    def load(self, key: str) -> JSONObject | None:
        data = self._keyring.get_password(self.service, key)
        return None if data is None else _object(data.encode())

    def save(self, key: str, record: JSONObject) -> None:
        self._keyring.set_password(self.service, key, orjson.dumps(record).decode())

    def delete(self, key: str) -> None:
        with contextlib.suppress(self._keyring.errors.PasswordDeleteError):
            self._keyring.delete_password(self.service, key)


def _object(data: bytes) -> JSONObject | None:
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None
