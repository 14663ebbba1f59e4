"""File-backed resources: the files under one directory, and nothing outside it.

How this works: `FileDirectory` owns every URI that starts with its prefix (by default the
root's own `file://` URI). The part after the prefix is percent-decoded exactly once and
checked before the file system is touched; then the path is resolved (following symlinks) and
must still lie under the root; then the file is opened without following a final symlink and
must be a regular file.

What a client gets back:

- -32602 Invalid params, with `{"uri", "reason"}` as data, for a URI that tries to leave or
  trick the root: `..` or `.` segments (also encoded, `%2e%2e`), an absolute path, empty
  segments, a query or fragment, backslashes, NUL bytes, invalid UTF-8, a value still
  percent-encoded after one decoding (double encoding: `%252e%252e`), hidden files (a segment
  starting with `.`, unless `include_hidden`), and a path that a symlink leads out of the
  root. These answers depend on the URI alone (and the links inside the root), never on
  what exists outside the root. With `refuse_hard_links`, also a file with more than one
  hard link (one of its names may lie outside the root), checked on the opened descriptor.
- The revision's resource-not-found error for a file that does not exist, a directory, or
  anything but a regular file (a FIFO, a device).
- -32603 for a file larger than `max_bytes`.

A file's mimeType comes from its suffix (a fixed table, the same on every machine). Text
types and unknown types that decode as UTF-8 (without NUL bytes) are sent as `text`; anything
else as a base64 `blob`. A symlink swapped in by someone with write access to the root between
the check and the open is caught for the last path component (O_NOFOLLOW) only. What the root
does and does not protect against: docs/limits.md, "File resources". Reads run
inline on the event loop (a local file costs microseconds; `max_bytes` bounds the worst case),
and the path is resolved again at every read, so a listing never keeps a stale answer.
"""

from __future__ import annotations

import functools
import mimetypes
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

from mcpkit.errors import INTERNAL_ERROR, InvalidParams, MCPError, ProtocolError
from mcpkit.server.context import Context
from mcpkit.server.resource_functions import Reader
from mcpkit.server.resource_wire import contents_item, not_found

__all__ = ["DEFAULT_MAX_BYTES", "FileDirectory", "FileEntry"]

JSONObject = dict[str, Any]
DEFAULT_MAX_BYTES = 32 * 1024 * 1024
_PCT = re.compile(r"%[0-9A-Fa-f]{2}")
_HARD_LINKED = "the file has more than one hard link"
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
_EXTRA_TYPES = {
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".yaml": "application/yaml",
    ".yml": "application/yaml",
    ".toml": "application/toml",
    ".rs": "text/x-rust",
    ".go": "text/x-go",
    ".ts": "text/x-typescript",
    ".tsx": "text/x-typescript",
    ".jsonl": "application/jsonl",
    ".ini": "text/plain",
    ".cfg": "text/plain",
    ".log": "text/plain",
    ".rst": "text/x-rst",
    ".sql": "application/sql",
}
_TEXT_TYPES = frozenset(
    {
        "application/json",
        "application/jsonl",
        "application/xml",
        "application/javascript",
        "application/yaml",
        "application/toml",
        "application/sql",
        "application/x-sh",
    }
)


@functools.cache
def _mime_table() -> mimetypes.MimeTypes:
    table = mimetypes.MimeTypes(filenames=())  # built-ins only: no /etc/mime.types
    for suffix, kind in _EXTRA_TYPES.items():
        table.add_type(kind, suffix)
    return table


def mime_type_for(name: str) -> str | None:
    """The mimeType for a file name, from its suffix (None when unknown)."""
    return _mime_table().guess_type(name, strict=False)[0]


def _is_text(mime_type: str) -> bool:
    return (
        mime_type.startswith("text/")
        or mime_type in _TEXT_TYPES
        or mime_type.endswith(("+json", "+xml"))
    )


class UnsafePath(MCPError, ValueError):
    """A URI that would leave the root or is not a plain relative path."""


@dataclass(frozen=True, slots=True)
class FileEntry:
    """One listed file."""

    uri: str
    name: str
    mime_type: str | None
    size: int


class FileDirectory:
    """The files under `root`, at URIs `uri_prefix` + relative path (see the module docstring).

    Raises FileNotFoundError / NotADirectoryError for a root that is not a directory,
    ValueError for a prefix holding `{`, `}`, `?` or `#`.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        uri_prefix: str | None = None,
        *,
        include_hidden: bool = False,
        max_bytes: int = DEFAULT_MAX_BYTES,
        max_files: int = 1000,
        refuse_hard_links: bool = False,
    ) -> None:
        self.root = Path(root).resolve(strict=True)
        if not self.root.is_dir():
            raise NotADirectoryError(f"not a directory: {self.root}")
        prefix = uri_prefix if uri_prefix is not None else self.root.as_uri()
        if not prefix.endswith("/"):
            prefix += "/"
        if any(c in prefix for c in "{}?#"):
            raise ValueError(f"a directory's URI prefix cannot hold {{, }}, ? or #: {prefix!r}")
        self.uri_prefix = prefix
        self.uri_template = prefix + "{+path}"
        self.include_hidden = include_hidden
        self.max_bytes = max_bytes
        self.max_files = max_files
        self.refuse_hard_links = refuse_hard_links
        self.listed: set[str] = set()  # the URIs the registry lists for this directory
        self.on_refresh: Callable[[], None] | None = None

    def refresh(self) -> None:
        """List the files again (the registry sends list_changed if the list changed)."""
        if self.on_refresh is not None:
            self.on_refresh()

    # -- URIs -> paths -----------------------------------------------------------------------------

    def relative_path(self, uri: str) -> str | None:
        """The checked relative path `uri` names, None when `uri` is not under the prefix.

        Raises UnsafePath when it is under the prefix but not a plain relative path.
        """
        if not uri.startswith(self.uri_prefix):
            return None
        raw = uri[len(self.uri_prefix) :]
        if not raw:
            return ""  # the root itself
        if "?" in raw or "#" in raw:
            raise UnsafePath("a file URI takes no query or fragment")
        try:
            path = unquote(raw, errors="strict")
        except UnicodeDecodeError:
            raise UnsafePath("the path is not valid UTF-8") from None
        self._check(path)
        return path

    def _check(self, path: str) -> None:
        if "\x00" in path:
            raise UnsafePath("the path holds a NUL byte")
        if _PCT.search(path):
            raise UnsafePath("the path is percent-encoded more than once")
        if "\\" in path:
            raise UnsafePath("the path holds a backslash")
        if path.startswith("/"):
            raise UnsafePath("the path is absolute")
        for segment in path.split("/"):
            if segment in ("..", "."):
                raise UnsafePath(f"the path holds a {segment!r} segment")
            if not segment:
                raise UnsafePath("the path holds an empty segment")
            if segment.startswith(".") and not self.include_hidden:
                raise UnsafePath("hidden files are not served")

    def resolve(self, relative: str) -> Path:
        """The real path of a checked relative path. Raises UnsafePath when symlinks lead
        out of the root."""
        resolved = self.root.joinpath(*relative.split("/")).resolve(strict=False)
        if not resolved.is_relative_to(self.root):
            raise UnsafePath("the path leads outside the served directory")
        return resolved

    # -- reading ----------------------------------------------------------------------------------

    def bind(self, uri: str) -> Reader | None:
        """A reader for `uri` (None when it is not under the prefix).

        Raises InvalidParams (with the reason) for an unsafe URI under the prefix.
        """
        try:
            relative = self.relative_path(uri)
            if relative:
                self.resolve(relative)
        except UnsafePath as exc:
            raise _invalid(uri, exc) from None
        except (RuntimeError, OSError):  # a symlink loop, an unreadable directory
            pass  # reading it will say not found
        if relative is None:
            return None
        return lambda ctx: self.read(uri, relative, ctx)

    def read(self, uri: str, relative: str, ctx: Context) -> JSONObject:
        """The ReadResourceResult for one file, resolved again now (links may have changed).

        Raises ProtocolError: invalid params (unsafe), not found, too large (-32603).
        """
        if not relative:
            raise not_found(uri, ctx, "a directory")
        try:
            path = self.resolve(relative)
            fd = os.open(path, _OPEN_FLAGS)
        except UnsafePath as exc:
            raise _invalid(uri, exc) from None
        except (RuntimeError, OSError):  # missing, a symlink loop or swapped in, unreadable
            raise not_found(uri, ctx) from None
        try:
            info = os.fstat(fd)  # the file we will read, whatever its path points at now
            if not stat.S_ISREG(info.st_mode):
                raise not_found(uri, ctx, "not a regular file")
            if self.refuse_hard_links and info.st_nlink > 1:
                raise _invalid(uri, UnsafePath(_HARD_LINKED))
            data = _read_at_most(fd, self.max_bytes + 1)
        finally:
            os.close(fd)
        if len(data) > self.max_bytes:
            raise ProtocolError(
                INTERNAL_ERROR,
                f"{uri} is larger than this server serves ({self.max_bytes} bytes)",
                {"uri": uri},
            )
        name = relative.rsplit("/", 1)[-1]  # the URI's name, as listed (not a link target's)
        return {"contents": [file_contents(uri, name, data)]}

    # -- listing ----------------------------------------------------------------------------------

    def scan(self) -> list[FileEntry]:
        """Up to `max_files` servable files, in sorted path order."""
        entries: list[FileEntry] = []
        if self.max_files <= 0:
            return entries
        for directory, subdirectories, files in os.walk(self.root):
            subdirectories[:] = sorted(
                d for d in subdirectories if self.include_hidden or not d.startswith(".")
            )
            for name in sorted(files):
                entry = self._entry(Path(directory, name))
                if entry is not None:
                    entries.append(entry)
                    if len(entries) >= self.max_files:
                        return entries
        return entries

    def _entry(self, path: Path) -> FileEntry | None:
        relative = path.relative_to(self.root).as_posix()
        try:
            self._check(relative)
            resolved = self.resolve(relative)
            info = resolved.stat()
        except (UnsafePath, RuntimeError, OSError):
            return None  # what a read would refuse is not listed either
        if not stat.S_ISREG(info.st_mode) or (self.refuse_hard_links and info.st_nlink > 1):
            return None
        uri = self.uri_prefix + quote(relative, safe="/")
        return FileEntry(uri, relative, mime_type_for(path.name), info.st_size)


def _read_at_most(fd: int, limit: int) -> bytes:
    chunks = []
    while limit > 0:
        chunk = os.read(fd, min(limit, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        limit -= len(chunk)
    return b"".join(chunks)


def _invalid(uri: str, exc: UnsafePath) -> InvalidParams:
    reason = str(exc)
    return InvalidParams(f"Invalid resource URI {uri}: {reason}", {"uri": uri, "reason": reason})


def file_contents(uri: str, name: str, data: bytes) -> JSONObject:
    """Text for text types (and unknown ones that decode as UTF-8), else a blob."""
    mime_type = mime_type_for(name)
    if mime_type is None or _is_text(mime_type):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        if text is not None and (mime_type is not None or "\x00" not in text):
            return contents_item(uri, text, mime_type or "text/plain")
    return contents_item(uri, data, mime_type or "application/octet-stream")
