"""Deprecation shims shared by the package: warnings pointed at the user's line, and the
dict-style reads of results that used to be wire dicts.

`warn_deprecated` attributes its DeprecationWarning to the first frame outside mcpkit (and
contextlib's wrappers): Python's default filters show a DeprecationWarning only for code in
`__main__`, so a fixed `stacklevel` would hide it behind whichever of our frames is there.

`DictReads` is mixed into a model that used to be returned as its wire dict: for one release
`result["content"]`, `result.get(...)` and `"key" in result` still answer from `to_wire()`,
each with a DeprecationWarning naming what to read instead.
"""

from __future__ import annotations

import os
import sys
import warnings
from typing import Any, Protocol

__all__ = ["DictReads", "warn_deprecated"]

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_CONTEXTLIB = os.path.join(os.path.dirname(os.path.abspath(warnings.__file__)), "contextlib")
_SKIPPED = (_PACKAGE, _CONTEXTLIB)


def warn_deprecated(message: str) -> None:
    """Warn `message` as a DeprecationWarning at the caller's caller outside mcpkit."""
    level, frame = 2, sys._getframe(1)
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_SKIPPED):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, DeprecationWarning, stacklevel=level)


class _Wire(Protocol):
    """What `DictReads` is mixed into: a model with its wire form (`MCPModel`)."""

    def to_wire(self) -> dict[str, Any]: ...


class DictReads:
    """Deprecated dict-style reads of a model (its wire form's keys), for one release."""

    __slots__ = ()

    def __getitem__(self: _Wire, key: str) -> Any:
        _warn(self, key)
        return self.to_wire()[key]

    def get(self: _Wire, key: str, default: Any = None) -> Any:
        _warn(self, key)
        return self.to_wire().get(key, default)

    def __contains__(self: _Wire, key: object) -> bool:
        _warn(self, str(key))
        return key in self.to_wire()


def _warn(model: object, key: str) -> None:
    mro = type(model).__mro__
    kind = mro[mro.index(DictReads) + 1].__name__  # the model it stands for
    warn_deprecated(
        f"reading a result as a dict ([{key!r}]) is deprecated: it is a mcpkit.types.{kind}; "
        "read its attributes (snake_case: .structured_content, .stop_reason, .uri) or call "
        ".to_wire() for the wire dict"
    )
