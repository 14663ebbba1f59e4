"""Where remembered consent lives: the `DecisionStore` interface, one store in memory and one in
a JSON file under the user's config directory.

A decision is kept under a `DecisionKey` (kind, server, tool, fingerprint): for a tool, the
fingerprint of the definition the user approved, so a changed definition finds nothing under
its new key (see `mcpkit.host.consent`). The file store is the one `mcpkit chat` uses: read
when it changed on disk (another process may have revoked something), rewritten whole on each
change through a temporary file and `os.replace` (a reader never sees half a file), mode
0600. A file that is not a consent file is an error naming it, never silently reset: that
would quietly revoke, or worse, lose, what the user decided.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple, Protocol

import orjson

from mcpkit._extras import optional_dependency
from mcpkit.errors import MCPError

JSONObject = dict[str, Any]
_VERSION = 1


class DecisionKey(NamedTuple):
    """What a decision is about: `kind` ("tool", "sampling", "sampling_result",
    "elicitation", "url"), the server, and for a tool its name and definition fingerprint
    (empty strings otherwise)."""

    kind: str
    server: str
    tool: str = ""
    fingerprint: str = ""


@dataclass(frozen=True, slots=True)
class StoredDecision:
    """A remembered answer: allowed or denied; for a tool the definition it was given for
    (shown when that definition changes); when it was saved (ISO 8601, UTC)."""

    allow: bool
    definition: JSONObject | None = None
    saved: str = ""

    @classmethod
    def now(cls, allow: bool, definition: JSONObject | None = None) -> StoredDecision:
        return cls(allow, definition, datetime.now(UTC).isoformat(timespec="seconds"))


class DecisionStoreError(MCPError):
    """The store cannot be read or written (a corrupt file): the message names the file."""


class DecisionStore(Protocol):
    """Remembered decisions by key. Methods are synchronous: the data is small and local."""

    def get(self, key: DecisionKey) -> StoredDecision | None: ...

    def put(self, key: DecisionKey, decision: StoredDecision) -> None: ...

    def forget(self, key: DecisionKey) -> bool:
        """Drop one decision; whether there was one."""
        ...

    def all(self) -> dict[DecisionKey, StoredDecision]:
        """A copy of every decision (to list them, or to find a tool's older definitions)."""
        ...

    def clear(self) -> None: ...


class MemoryDecisionStore:
    """Decisions in this process only (the default when a policy is given no store)."""

    def __init__(self) -> None:
        self._decisions: dict[DecisionKey, StoredDecision] = {}

    def get(self, key: DecisionKey) -> StoredDecision | None:
        return self._decisions.get(key)

    def put(self, key: DecisionKey, decision: StoredDecision) -> None:
        self._decisions[DecisionKey(*key)] = decision

    def forget(self, key: DecisionKey) -> bool:
        return self._decisions.pop(key, None) is not None

    def all(self) -> dict[DecisionKey, StoredDecision]:
        return dict(self._decisions)

    def clear(self) -> None:
        self._decisions.clear()


class FileDecisionStore:
    """Decisions in a JSON file, by default `consent.json` in
    `platformdirs.user_config_dir("mcpkit")` (platformdirs: the `mcpkit[host]` extra).

    The file is read again whenever its size or modification time changed, and rewritten
    atomically with mode 0600 on `put` / `forget` / `clear` (the directory is created 0700).
    Raises DecisionStoreError, naming the file, when it holds something else than decisions;
    OSError when it cannot be read or written.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        if path is None:
            with optional_dependency():
                import platformdirs

            path = Path(platformdirs.user_config_dir("mcpkit")) / "consent.json"
        self.path = Path(path)
        self._decisions: dict[DecisionKey, StoredDecision] = {}
        self._seen: tuple[int, int] | None = None  # (mtime_ns, size) of what was read

    def get(self, key: DecisionKey) -> StoredDecision | None:
        return self._current().get(key)

    def put(self, key: DecisionKey, decision: StoredDecision) -> None:
        decisions = self._current()
        decisions[DecisionKey(*key)] = decision
        self._write(decisions)

    def forget(self, key: DecisionKey) -> bool:
        decisions = self._current()
        if decisions.pop(key, None) is None:
            return False
        self._write(decisions)
        return True

    def all(self) -> dict[DecisionKey, StoredDecision]:
        return dict(self._current())

    def clear(self) -> None:
        self._write({})

    def _current(self) -> dict[DecisionKey, StoredDecision]:
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            self._decisions, self._seen = {}, None
            return self._decisions
        seen = (stat.st_mtime_ns, stat.st_size)
        if seen != self._seen:
            self._decisions = _parse(self.path, self.path.read_bytes())
            self._seen = seen
        return self._decisions

    def _write(self, decisions: dict[DecisionKey, StoredDecision]) -> None:
        rows = [
            {**key._asdict(), "allow": d.allow, "definition": d.definition, "saved": d.saved}
            for key, d in decisions.items()
        ]
        data = orjson.dumps({"version": _VERSION, "decisions": rows}, option=orjson.OPT_INDENT_2)
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(prefix=".consent-", dir=self.path.parent)
        try:
            with os.fdopen(fd, "wb") as file:
                os.fchmod(file.fileno(), 0o600)
                file.write(data)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
        self._decisions = decisions
        stat = self.path.stat()
        self._seen = (stat.st_mtime_ns, stat.st_size)


def _parse(path: Path, text: bytes) -> dict[DecisionKey, StoredDecision]:
    def corrupt(problem: str) -> DecisionStoreError:
        return DecisionStoreError(
            f"{path} is not an mcpkit consent file ({problem}); fix it or delete it "
            "(deleting it forgets every remembered approval)"
        )

    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise corrupt(f"not JSON: {exc}") from None
    if not isinstance(data, dict) or data.get("version") != _VERSION:
        raise corrupt(f'expected an object with "version": {_VERSION}')
    rows = data.get("decisions")
    if not isinstance(rows, list):
        raise corrupt('"decisions" must be a list')
    decisions: dict[DecisionKey, StoredDecision] = {}
    for n, row in enumerate(rows):
        parts = [row.get(f) for f in DecisionKey._fields] if isinstance(row, dict) else []
        strings = [p for p in parts if isinstance(p, str)]
        if not parts or len(strings) != len(parts):
            raise corrupt(f"decision {n}: kind, server, tool and fingerprint must be strings")
        allow, definition, saved = row.get("allow"), row.get("definition"), row.get("saved", "")
        if not isinstance(allow, bool) or not isinstance(definition, dict | None):
            raise corrupt(f"decision {n}: allow must be true or false, definition an object")
        decisions[DecisionKey(*strings)] = StoredDecision(allow, definition, str(saved))
    return decisions
