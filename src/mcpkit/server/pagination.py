"""Pages of list results behind opaque, tamper-evident cursors.

A cursor names an offset into one list at one registry version, signed with the server's
secret (HMAC-SHA256, truncated). A forged or mangled cursor is -32602, never a crash; a cursor
from an older registry version still works (the offset is clamped), so a client paging while
tools change sees a stable order and no error. Each page is serialized once per registry
version and reused for every request that asks for it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os
from typing import Any

from mcpkit.errors import InvalidParams
from mcpkit.protocol import Prepared

JSONObject = dict[str, Any]
_TAG_BYTES = 12
_MAX_PAGES = 4096


class Paginator:
    """Cursor codec plus a cache of serialized pages."""

    def __init__(self, page_size: int | None = None, secret: bytes | None = None) -> None:
        if page_size is not None and page_size < 1:
            raise ValueError("page_size must be positive (or None for one page)")
        self.page_size = page_size
        self._secret = secret or os.urandom(32)
        self._pages: dict[tuple[str, int, int], Prepared] = {}

    def page(
        self, key: str, version: int, items: list[JSONObject], cursor: Any, view: str = ""
    ) -> Prepared:
        """The page of `items` (all under `key`, e.g. "tools") that `cursor` points at.
        `view` names a partial list (a principal's view): its pages and cursors are its own."""
        name = key + view
        offset = 0 if cursor is None else self._decode(name, cursor)
        cached = self._pages.get((name, version, offset))
        if cached is not None:
            return cached
        size = self.page_size or len(items) or 1
        result: JSONObject = {key: items[offset : offset + size]}
        if offset + size < len(items):
            result["nextCursor"] = self._encode(name, offset + size)
        prepared = Prepared(result)
        # Older versions of this list are dead: drop their pages. (Views are many at most
        # as there are distinct scope sets; past a bound, start over.)
        for stale in [k for k in self._pages if k[0] == name and k[1] != version]:
            del self._pages[stale]
        if len(self._pages) > _MAX_PAGES:
            self._pages.clear()
        self._pages[(name, version, offset)] = prepared
        return prepared

    def _encode(self, key: str, offset: int) -> str:
        body = offset.to_bytes(8, "big")
        return base64.urlsafe_b64encode(body + self._tag(key, body)).decode().rstrip("=")

    def _decode(self, key: str, cursor: Any) -> int:
        if type(cursor) is not str or len(cursor) > 64:
            raise InvalidParams("Invalid cursor")
        try:
            raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        except (binascii.Error, ValueError):
            raise InvalidParams("Invalid cursor") from None
        body, tag = raw[:8], raw[8:]
        if len(body) != 8 or not hmac.compare_digest(tag, self._tag(key, body)):
            raise InvalidParams("Invalid cursor")
        return int.from_bytes(body, "big")

    def _tag(self, key: str, body: bytes) -> bytes:
        return hmac.new(self._secret, key.encode() + body, hashlib.sha256).digest()[:_TAG_BYTES]
